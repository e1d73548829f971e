import { describe, expect, it } from 'vitest';
import { ageInDays, compressedName, dayOf, fileNameOf, movedName, nextIndex, parseLogFileName, planDay, rotatedFileName, type RetentionDays } from '../../src/logs/files/layout.js';

const RETENTION: RetentionDays = { system: 90, application: 90, user_activity: 365, security: 2555, performance: 30, debug: 7 };

describe('log file names', () => {
  it('an entry goes to its category file, DEBUG entries of any category to debug', () => {
    expect(fileNameOf({ level: 'INFO', category: 'security' })).toBe('security');
    expect(fileNameOf({ level: 'CRITICAL', category: 'system' })).toBe('system');
    expect(fileNameOf({ level: 'DEBUG', category: 'security' })).toBe('debug');
  });

  it('the day is the UTC day of the timestamp', () => {
    expect(dayOf('2026-01-31T23:59:59.999Z')).toBe('2026-01-31');
    expect(dayOf('2026-02-01T00:00:00.000Z')).toBe('2026-02-01');
  });

  it('parses live, rotated and compressed names; ignores anything else', () => {
    expect(parseLogFileName('system.log')).toEqual({ name: 'system', index: null, gz: false });
    expect(parseLogFileName('user_activity.12.log.gz')).toEqual({ name: 'user_activity', index: 12, gz: true });
    expect(parseLogFileName('debug.log.gz')).toEqual({ name: 'debug', index: null, gz: true });
    for (const other of ['system.log.gz.partial', 'notes.txt', 'audit.log', 'system.x.log']) expect(parseLogFileName(other)).toBeNull();
  });

  it('rotations are numbered after the highest taken (compressed or not)', () => {
    expect(nextIndex('system', [])).toBe(1);
    expect(nextIndex('system', ['system.log', 'system.1.log.gz', 'system.2.log', 'security.7.log.gz'])).toBe(3);
    expect(rotatedFileName('security', 3, false)).toBe('security.3.log');
    expect(rotatedFileName('security', 3, true)).toBe('security.3.log.gz');
  });

  it('a compressed name never overwrites one already there', () => {
    expect(compressedName('system.log', new Set(['system.log']))).toBe('system.log.gz');
    expect(compressedName('system.2.log', new Set())).toBe('system.2.log.gz');
    // Late entries of a day already compressed: the new part gets the next number.
    expect(compressedName('system.log', new Set(['system.log', 'system.log.gz', 'system.1.log.gz']))).toBe('system.2.log.gz');
    expect(movedName('system.log.gz', new Set(['system.log.gz', 'system.1.log.gz']))).toBe('system.2.log.gz');
    expect(movedName('debug.log.gz', new Set(['system.log.gz']))).toBe('debug.log.gz');
  });
});

describe('what retention does with a day', () => {
  const files = ['system.log', 'system.1.log.gz', 'security.log', 'debug.log', 'performance.log', 'user_activity.log', 'application.log', 'README'];

  it('today: nothing but a rotation left uncompressed', () => {
    expect(planDay('2026-05-10', files, '2026-05-10', RETENTION, false)).toEqual([]);
    expect(planDay('2026-05-10', ['system.log', 'system.3.log'], '2026-05-10', RETENTION, false)).toEqual([{ kind: 'compress', file: 'system.3.log' }]);
  });

  it('a past day: every live file compressed, then the day archived', () => {
    expect(planDay('2026-05-09', files, '2026-05-10', RETENTION, false)).toEqual([
      { kind: 'compress', file: 'system.log' },
      { kind: 'compress', file: 'security.log' },
      { kind: 'compress', file: 'debug.log' },
      { kind: 'compress', file: 'performance.log' },
      { kind: 'compress', file: 'user_activity.log' },
      { kind: 'compress', file: 'application.log' },
      { kind: 'archive' },
    ]);
    expect(planDay('2026-05-09', ['system.log.gz'], '2026-05-10', RETENTION, true)).toEqual([]);
  });

  it('each name expires after its own retention: debug after 7 days, performance 30, system 90, user activity 365, security 2555', () => {
    const kept = (today: string) => {
      const deleted = new Set(planDay('2026-01-01', files, today, RETENTION, true).flatMap((s) => (s.kind === 'delete' ? [s.file] : [])));
      return files.filter((f) => parseLogFileName(f) && !deleted.has(f));
    };
    expect(ageInDays('2026-01-01', '2026-01-08')).toBe(7);
    expect(kept('2026-01-08')).toContain('debug.log');
    expect(kept('2026-01-09')).not.toContain('debug.log');
    expect(kept('2026-01-31')).toContain('performance.log');
    expect(kept('2026-02-01')).not.toContain('performance.log');
    expect(ageInDays('2026-01-01', '2026-04-01')).toBe(90);
    expect(kept('2026-04-01')).toEqual(['system.log', 'system.1.log.gz', 'security.log', 'user_activity.log', 'application.log']);
    expect(kept('2026-04-02')).toEqual(['security.log', 'user_activity.log']);
    expect(kept('2027-01-01')).toEqual(['security.log', 'user_activity.log']);
    expect(kept('2027-01-02')).toEqual(['security.log']);
    expect(ageInDays('2026-01-01', '2032-12-30')).toBe(2555);
    expect(kept('2032-12-30')).toEqual(['security.log']);
    expect(kept('2032-12-31')).toEqual([]);
  });

  it('a past day whose every file expired is not archived', () => {
    expect(planDay('2026-01-01', ['debug.log'], '2026-03-01', RETENTION, false)).toEqual([{ kind: 'delete', file: 'debug.log' }]);
  });
});
