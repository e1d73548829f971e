/** Argument checks shared by both counters adapters, so they refuse the same inputs the same way. */
import type { AdmissionRequest, Settlement } from '../../ports/counters.js';

export function assertFinite(name: string, value: number): void {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${value}`);
}

export function assertPositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
}

export function assertNonNegative(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number, got ${value}`);
}

/**
 * Checks an admission's numbers, and that no window key appears twice in it (a key is one window;
 * counting or checking it twice in one admission is a caller bug that would double-count).
 */
export function assertAdmission(request: AdmissionRequest): void {
  const keys = new Set<string>();
  const once = (key: string) => {
    if (keys.has(key)) throw new RangeError(`admission: window key "${key}" appears more than once (windows and checkWindows share one set of keys)`);
    keys.add(key);
  };
  for (const [i, w] of request.windows.entries()) {
    assertFinite(`windows[${i}].limit`, w.limit);
    assertPositive(`windows[${i}].windowMs`, w.windowMs);
    if (w.cost !== undefined) assertNonNegative(`windows[${i}].cost`, w.cost);
    once(w.key);
  }
  for (const [i, w] of request.checkWindows.entries()) {
    assertFinite(`checkWindows[${i}].limit`, w.limit);
    assertPositive(`checkWindows[${i}].windowMs`, w.windowMs);
    once(w.key);
  }
  if (request.slot) {
    assertFinite('slot.limit', request.slot.limit);
    assertPositive('slot.leaseMs', request.slot.leaseMs);
  }
  if (request.reservation) {
    assertNonNegative('reservation.amount', request.reservation.amount);
    assertFinite('reservation.limit', request.reservation.limit);
  }
}

export function assertSettlement(settlement: Settlement): void {
  for (const [i, c] of (settlement.charge ?? []).entries()) {
    assertPositive(`charge[${i}].windowMs`, c.windowMs);
    assertNonNegative(`charge[${i}].cost`, c.cost);
  }
  if (settlement.reservation) {
    assertNonNegative('reservation.reserved', settlement.reservation.reserved);
    assertNonNegative('reservation.actual', settlement.reservation.actual);
  }
}
