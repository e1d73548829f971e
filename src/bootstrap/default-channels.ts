/**
 * Default channels from `<PROVIDER>_API_KEY` variables (issue 21, "Environment renames of 2.0"):
 * an installation started with OPENAI_API_KEY set relays to OpenAI at once, without a visit to
 * the admin UI. `switchyard init` (issue 22) uses the same two parts:
 *
 * - `defaultChannelsFromEnv`: pure, the environment -> the channels to create (settings and key);
 *   config.ts calls it, so a malformed variable is a startup error naming it like any other.
 * - `createDefaultChannels`: I/O, creates them through the channel command when the default
 *   tenant has no channel yet.
 *
 * Only kinds with a hosted API, an API key and a usable default base URL get a variable. Azure
 * (a URL per resource, deployments named by the operator), Bedrock (AWS credentials and a region),
 * `custom` (no default anything) and the local servers (ollama, vllm, llamacpp, lmstudio: no key,
 * models are what was pulled) are created in the admin UI or API instead.
 */
import { createChannel } from '../commands/channels/names.js';
import type { ChannelSettings } from '../commands/channels/events.js';
import type { CommandBus } from '../commands/bus.js';
import { DEFAULT_TENANT } from '../commands/tenants/decider.js';
import { maskSecret, type SecretBox } from '../crypto/secret-box.js';
import { AppError } from '../errors.js';
import { ownValue } from '../own.js';
import type { Logger } from '../logger.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';
import type { ChannelType } from '../relay/channel.js';

/**
 * The kinds a `<PROVIDER>_API_KEY` variable creates a channel for, with the models the channel
 * serves unless `<PROVIDER>_MODELS` says otherwise (each provider's current, widely used chat
 * models; the list ages, hence the override).
 */
export const ENV_CHANNEL_MODELS = {
  openai: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o3', 'o3-mini', 'o4-mini'],
  anthropic: ['claude-opus-4-1', 'claude-sonnet-4-5', 'claude-sonnet-4-0', 'claude-3-7-sonnet-latest', 'claude-3-5-haiku-latest'],
  gemini: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.0-flash', 'gemini-1.5-pro', 'gemini-1.5-flash'],
  cohere: ['command-a-03-2025', 'command-r-plus', 'command-r'],
  mistral: ['mistral-large-latest', 'mistral-medium-latest', 'mistral-small-latest', 'codestral-latest'],
  deepseek: ['deepseek-chat', 'deepseek-reasoner'],
  groq: ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant'],
  openrouter: ['openai/gpt-4o', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'google/gemini-2.5-flash'],
  xai: ['grok-4', 'grok-3', 'grok-3-mini'],
  moonshot: ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k'],
  zhipu: ['glm-4-plus', 'glm-4-air', 'glm-4-flash'],
  qwen: ['qwen-max', 'qwen-plus', 'qwen-turbo'],
} as const satisfies Partial<Record<ChannelType, readonly string[]>>;

export type EnvChannelKind = keyof typeof ENV_CHANNEL_MODELS;
export const ENV_CHANNEL_KINDS = Object.keys(ENV_CHANNEL_MODELS) as EnvChannelKind[];

/** The variables of one kind: `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODELS`. */
export function envNamesOf(kind: EnvChannelKind): { apiKey: string; baseUrl: string; models: string } {
  const prefix = kind.toUpperCase();
  return { apiKey: `${prefix}_API_KEY`, baseUrl: `${prefix}_BASE_URL`, models: `${prefix}_MODELS` };
}

/**
 * The fixed id of a kind's default channel. Fixed so that instances starting together create it
 * once (the second create is refused by the decider), and so that a deleted one stays deleted
 * (its stream exists: creating it again is refused too).
 */
export function defaultChannelId(kind: EnvChannelKind): string {
  return `ch_default_${kind}`;
}

export interface DefaultChannel {
  id: string;
  kind: EnvChannelKind;
  /** The variable the key came from (for the log line; never the key). */
  source: string;
  settings: ChannelSettings;
  /** Plaintext: sealed when the channel is created, never logged. */
  key: string;
}

/** A variable that is set but unusable: config.ts turns these into a ConfigError. */
export interface EnvChannelProblem {
  variable: string;
  message: string;
}

export interface EnvChannels {
  channels: DefaultChannel[];
  problems: EnvChannelProblem[];
  /** Set but without effect (a base URL or models list without its key). */
  ignored: EnvChannelProblem[];
}

function baseUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an http(s) URL';
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an http(s) URL';
}

/**
 * The channels the environment asks for, in registry order. Empty values count as unset (as in
 * config.ts). `<PROVIDER>_BASE_URL` replaces the kind's default URL (a proxy, a regional endpoint,
 * a test double); `<PROVIDER>_MODELS` is a comma list replacing the built-in models list.
 */
export function defaultChannelsFromEnv(env: Readonly<Record<string, string | undefined>>): EnvChannels {
  const value = (name: string) => {
    const text = ownValue(env, name)?.trim();
    return text ? text : undefined;
  };
  const result: EnvChannels = { channels: [], problems: [], ignored: [] };
  for (const kind of ENV_CHANNEL_KINDS) {
    const names = envNamesOf(kind);
    const key = value(names.apiKey);
    const baseUrl = value(names.baseUrl);
    const modelsText = value(names.models);
    if (key === undefined) {
      for (const name of [baseUrl === undefined ? null : names.baseUrl, modelsText === undefined ? null : names.models]) {
        if (name) result.ignored.push({ variable: name, message: `${name} is set but ${names.apiKey} is not: no ${kind} channel is created from it` });
      }
      continue;
    }
    const urlProblem = baseUrl === undefined ? null : baseUrlProblem(baseUrl);
    if (urlProblem) result.problems.push({ variable: names.baseUrl, message: urlProblem });
    const models = modelsText === undefined ? [...ENV_CHANNEL_MODELS[kind]] : [...new Set(modelsText.split(',').map((m) => m.trim()).filter(Boolean))];
    if (models.length === 0) result.problems.push({ variable: names.models, message: 'must be a comma list of model names' });
    if (urlProblem || models.length === 0) continue;
    result.channels.push({
      id: defaultChannelId(kind),
      kind,
      source: names.apiKey,
      key,
      settings: { name: kind, type: kind, base_url: baseUrl?.replace(/\/+$/, '') ?? null, models, model_mapping: {}, priority: 0, weight: 1, enabled: true, config: {} },
    });
  }
  return result;
}

export interface DefaultChannelsDeps {
  commands: CommandBus;
  db: ReadModelDb;
  secrets: SecretBox;
  logger: Logger;
  /** Resolves once the channels read model has everything appended so far (the log's head). */
  channelsCaughtUp: () => Promise<void>;
}

/**
 * Creates `wanted` in the default tenant when it has no channel yet. Returns the log position of
 * the last channel created here (0: none). A channel another instance created a moment ago, or
 * one an admin deleted, is refused by the decider (`channel_exists`) and counts as done.
 */
export async function createDefaultChannels(wanted: readonly DefaultChannel[], deps: DefaultChannelsDeps): Promise<number> {
  if (wanted.length === 0) return 0;
  const log = deps.logger.child({ category: 'system', component: 'bootstrap' });
  try {
    await deps.channelsCaughtUp();
  } catch (error) {
    // A read model behind the log could say "no channel" wrongly: better none created than extra ones.
    log.warn({ event: 'default_channels_skipped', err: error }, 'default channels not created: the channels read model did not reach the log head in time');
    return 0;
  }
  const any = await deps.db.selectFrom('channels').select('id').where('tenant_id', '=', DEFAULT_TENANT).limit(1).executeTakeFirst();
  if (any) return 0;
  let position = 0;
  for (const channel of wanted) {
    const key = { sealed: deps.secrets.seal(channel.key), masked: maskSecret(channel.key) };
    try {
      const created = await createChannel(deps.commands, { type: 'CreateChannel', channelId: channel.id, settings: channel.settings, key }, { tenantId: DEFAULT_TENANT, causationId: 'bootstrap' });
      position = Math.max(position, created.position ?? 0);
    } catch (error) {
      if (error instanceof AppError && error.code === 'channel_exists') continue;
      throw error;
    }
    log.info({ event: 'default_channel_created', provider: channel.kind, channel_id: channel.id, channel_name: channel.settings.name, source: channel.source }, `default channel "${channel.settings.name}" (${channel.kind}) created from ${channel.source}`);
  }
  return position;
}
