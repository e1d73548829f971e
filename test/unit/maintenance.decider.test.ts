/** Given / when / then over the maintenance decider: pure, no I/O. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAINTENANCE_MESSAGE, maintenance, type MaintenanceCommand } from '../../src/commands/maintenance/decider.js';
import type { MaintenanceEvent } from '../../src/commands/maintenance/events.js';
import { DomainError } from '../../src/errors.js';

function given(history: MaintenanceEvent[]) {
  const state = history.reduce(maintenance.evolve, maintenance.initialState);
  return { when: (command: MaintenanceCommand) => maintenance.decide(command, state) };
}

describe('maintenance decider', () => {
  it('enables with the given message', () => {
    expect(given([]).when({ type: 'SetMaintenance', enabled: true, message: ' Upgrading DB ', by: 'u1' })).toEqual([
      { type: 'MaintenanceEnabled', data: { message: 'Upgrading DB', by: 'u1' } },
    ]);
  });

  it('uses a default message when none is given', () => {
    const [event] = given([]).when({ type: 'SetMaintenance', enabled: true, by: null });
    expect(event).toEqual({ type: 'MaintenanceEnabled', data: { message: DEFAULT_MAINTENANCE_MESSAGE, by: null } });
  });

  it('decides nothing when enabling again with the same message', () => {
    const history: MaintenanceEvent[] = [{ type: 'MaintenanceEnabled', data: { message: 'x', by: null } }];
    expect(given(history).when({ type: 'SetMaintenance', enabled: true, message: 'x', by: null })).toEqual([]);
  });

  it('changes the message while on', () => {
    const history: MaintenanceEvent[] = [{ type: 'MaintenanceEnabled', data: { message: 'x', by: null } }];
    expect(given(history).when({ type: 'SetMaintenance', enabled: true, message: 'y', by: 'u2' })).toEqual([
      { type: 'MaintenanceEnabled', data: { message: 'y', by: 'u2' } },
    ]);
  });

  it('disables only when on', () => {
    expect(given([]).when({ type: 'SetMaintenance', enabled: false, by: null })).toEqual([]);
    const history: MaintenanceEvent[] = [{ type: 'MaintenanceEnabled', data: { message: 'x', by: null } }];
    expect(given(history).when({ type: 'SetMaintenance', enabled: false, by: 'u1' })).toEqual([{ type: 'MaintenanceDisabled', data: { by: 'u1' } }]);
  });

  it('folds history into state', () => {
    const state = [
      { type: 'MaintenanceEnabled', data: { message: 'a', by: null } },
      { type: 'MaintenanceDisabled', data: { by: null } },
      { type: 'MaintenanceEnabled', data: { message: 'b', by: null } },
    ].reduce((s, e) => maintenance.evolve(s, e as MaintenanceEvent), maintenance.initialState);
    expect(state).toEqual({ enabled: true, message: 'b' });
  });

  it('refuses an oversized message', () => {
    expect(() => given([]).when({ type: 'SetMaintenance', enabled: true, message: 'm'.repeat(1001), by: null })).toThrow(DomainError);
  });
});
