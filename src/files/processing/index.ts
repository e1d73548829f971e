/**
 * The file processor the configuration chooses (FILE_PROCESSING_ENGINE): null for `none` (files
 * are stored and stay `uploaded`); for `builtin`, TEMPORARILY the in-process text reader
 * (inline-text.ts) until the worker-pool engine is merged — the integrator swaps it here.
 */
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { InlineTextProcessor } from './inline-text.js';
import type { FileProcessor } from './processor.js';

export async function openFileProcessor(config: Config['files'], logger: Logger): Promise<FileProcessor | null> {
  if (config.engine === 'none') return null;
  logger.debug('file processing: built-in text reader (texts only, in process)');
  return new InlineTextProcessor();
}
