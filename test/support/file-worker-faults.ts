/**
 * A file-processing worker module for tests (FilePoolOptions.workerModule): the real worker,
 * except for a few made-up types that make it misbehave the ways a parser can (loop forever,
 * throw, exhaust its heap, exit). Production workers never see these types: detection only
 * names the types of src/files/mime.ts.
 */
import processFile from '../../src/files/processing/worker.js';
import type { ProcessingInput, ProcessingResult } from '../../src/files/processing/processor.js';

export const FAULTS = {
  /** A busy loop with no await: only terminating the thread ends it. */
  loop: 'application/x-test-loop',
  throw: 'application/x-test-throw',
  /** Allocates until the worker's heap cap (resourceLimits) ends the thread. */
  hoard: 'application/x-test-hoard',
  exit: 'application/x-test-exit',
} as const;

export default async function processWithFaults(input: ProcessingInput): Promise<ProcessingResult> {
  switch (input.mimeType) {
    case FAULTS.loop:
      for (;;) {
        // spin
      }
    case FAULTS.throw:
      throw new Error('a parser bug');
    case FAULTS.hoard: {
      // 32 MB arrays of doubles: the cap is reached in a few steps, not after minutes of collection.
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array<number>(4_000_000).fill(Math.random()));
    }
    case FAULTS.exit:
      return process.exit(7);
    default:
      return processFile(input);
  }
}
