import { readFileSync } from 'node:fs';

/** The niceness the kernel reports for a thread of this process (Linux: field 19 of its stat line). */
export function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}
