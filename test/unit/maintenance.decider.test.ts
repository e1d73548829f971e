/** Given / when / then over the maintenance decider: pure, no I/O. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAINTENANCE_MESSAGE, maintenance } from '../../src/commands/maintenance/decider.js';
import type { MaintenanceEvent } from '../../src/commands/maintenance/events.js';
import { DomainError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(maintenance);
const onWithX: MaintenanceEvent[] = [{ type: 'MaintenanceEnabled', data: { message: 'x', by: null } }];

describe('maintenance decider', () => {
  it('enables with the given message', () => {
    spec.given([]).when({ type: 'SetMaintenance', enabled: true, message: ' Upgrading DB ', by: 'u1' }).then([{ type: 'MaintenanceEnabled', data: { message: 'Upgrading DB', by: 'u1' } }]);
  });

  it('uses a default message when none is given', () => {
    spec.given([]).when({ type: 'SetMaintenance', enabled: true, by: null }).then([{ type: 'MaintenanceEnabled', data: { message: DEFAULT_MAINTENANCE_MESSAGE, by: null } }]);
  });

  it('decides nothing when enabling again with the same message', () => {
    spec.given(onWithX).when({ type: 'SetMaintenance', enabled: true, message: 'x', by: null }).thenNothingHappened();
  });

  it('changes the message while on', () => {
    spec.given(onWithX).when({ type: 'SetMaintenance', enabled: true, message: 'y', by: 'u2' }).then([{ type: 'MaintenanceEnabled', data: { message: 'y', by: 'u2' } }]);
  });

  it('disables only when on', () => {
    spec.given([]).when({ type: 'SetMaintenance', enabled: false, by: null }).thenNothingHappened();
    spec.given(onWithX).when({ type: 'SetMaintenance', enabled: false, by: 'u1' }).then([{ type: 'MaintenanceDisabled', data: { by: 'u1' } }]);
  });

  it('folds history into state', () => {
    const { state } = spec.given([
      { type: 'MaintenanceEnabled', data: { message: 'a', by: null } },
      { type: 'MaintenanceDisabled', data: { by: null } },
      { type: 'MaintenanceEnabled', data: { message: 'b', by: null } },
    ]);
    expect(state).toEqual({ enabled: true, message: 'b' });
  });

  it('refuses an oversized message', () => {
    spec.given([]).when({ type: 'SetMaintenance', enabled: true, message: 'm'.repeat(1001), by: null }).thenThrows(DomainError);
  });
});
