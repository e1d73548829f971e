/** The file processor of this instance, from config.files (FILE_PROCESSING_ENGINE). */
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { FileProcessingPool } from './pool.js';
import type { FileProcessor } from './processor.js';

export type { FileProcessor, ProcessingInput, ProcessingResult } from './processor.js';

/** null for `none` (files are stored and stay `uploaded`); the worker pool for `builtin`. */
export function openFileProcessor(config: Config, logger: Logger): Promise<FileProcessor | null> {
  if (config.files.engine === 'none') return Promise.resolve(null);
  const { workers, processingTimeoutMs, ocr } = config.files;
  return Promise.resolve(new FileProcessingPool({ workers, timeoutMs: processingTimeoutMs, ocr }, logger));
}
