/**
 * What the application needs of its projectors: start, stop, read-your-writes and status. Run
 * either on the serving thread (ProjectionRunner itself) or, the default, in a thread of their
 * own (ProjectorThread): projecting is most of what each relayed request costs after the
 * response, and in its own thread it uses a second core instead of delaying responses.
 */
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { Thread } from '../../threads.js';
import type { ProjectionStatus } from './runner.js';

export interface WaitForOptions {
  timeoutMs?: number;
  projections?: string[];
}

export interface Projectors {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves when every (or each named) projection has reached `position`. */
  waitFor(position: number, options?: WaitForOptions): Promise<void>;
  status(): Promise<ProjectionStatus[]>;
  /** Drops one projection's state and replays it from the log; resolves once caught up. */
  rebuild(name: string): Promise<void>;
  /** Drops several projections' state and replays the log into them in one pass (runner.ts). */
  rebuildTogether(names: readonly string[]): Promise<void>;
}

export class ProjectorThread implements Projectors {
  private thread: Thread | null = null;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const thread = new Thread(new URL('./projector-thread.js', import.meta.url), { config: this.config }, {
      onLog: (record) => this.relog(record),
      onExit: (error) => this.logger.error({ event: 'projector_thread_stopped', err: error }, 'the projector thread stopped; restart the instance'),
    });
    this.thread = thread;
    await thread.start();
    await thread.call('start');
  }

  async stop(): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    this.thread = null;
    if (thread.alive) await thread.call('stop').catch((error: unknown) => this.logger.warn({ err: error }, 'projector thread did not stop cleanly'));
    await thread.stop();
  }

  waitFor(position: number, options: WaitForOptions = {}): Promise<void> {
    return this.running().call('waitFor', { position, options });
  }

  status(): Promise<ProjectionStatus[]> {
    return this.running().call('status');
  }

  rebuild(name: string): Promise<void> {
    return this.running().call('rebuild', name);
  }

  rebuildTogether(names: readonly string[]): Promise<void> {
    return this.running().call('rebuildTogether', names);
  }

  /** The thread's id and niceness, as PROJECTORS_NICE set them (null: left as it was). */
  priority(): Promise<{ tid: number; nice: number } | null> {
    return this.running().call('priority');
  }

  private running(): Thread {
    if (!this.thread) throw new Error('projectors are not running');
    return this.thread;
  }

  /** A record the thread logged, written by this process's logger at its level. */
  private relog(record: Record<string, unknown>) {
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, service: _service, ...fields } = record;
    const label = this.logger.levels.labels[Number(level)] as 'info' | 'warn' | 'error' | 'debug' | 'trace' | 'fatal' | undefined;
    this.logger[label ?? 'info']({ ...fields, thread: 'projectors' }, typeof msg === 'string' ? msg : '');
  }
}
