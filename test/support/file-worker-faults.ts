/**
 * A file-processing worker module for tests (FilePoolOptions.workerModule): the real worker,
 * except for a few made-up types that make it misbehave the ways a parser can (loop forever,
 * throw, exit). Exhausting the heap needs no made-up type: a DOCX bomb does it for real. Production workers never see these types: detection only
 * names the types of src/files/mime.ts.
 */
import processFile, { announceStart, type FileTask } from '../../src/files/processing/worker.js';
import type { ProcessingResult } from '../../src/files/processing/processor.js';

/** What the throwing fault's message quotes "from the file". */
export const FAULT_MESSAGE_SECRET = 'words-from-the-users-file';

export const FAULTS = {
  /** A busy loop with no await: only terminating the thread ends it. */
  loop: 'application/x-test-loop',
  throw: 'application/x-test-throw',
  exit: 'application/x-test-exit',
} as const;

export default async function processWithFaults(task: FileTask): Promise<ProcessingResult> {
  if (!(Object.values(FAULTS) as string[]).includes(task.mimeType)) return processFile(task);
  announceStart(task);
  switch (task.mimeType) {
    case FAULTS.loop:
      for (;;) {
        // spin
      }
    case FAULTS.throw:
      // A parser's message may quote the file: the pool must keep it out of the log.
      throw new Error(`a parser bug near ${FAULT_MESSAGE_SECRET}`);
    case FAULTS.exit:
      return process.exit(7);
    default:
      throw new Error(`no fault named ${task.mimeType}`);
  }
}
