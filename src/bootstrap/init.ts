/**
 * `switchyard init`: the first channel and an API key in one step, and a snippet to paste. On a
 * terminal it asks (provider, key, base URL, models); otherwise flags say it, or the
 * `<PROVIDER>_API_KEY` variables do (the same mapping as the default channels at first start:
 * ./default-channels.ts). The key belongs to the root admin.
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { createApp } from '../app.js';
import { ROOT_ADMIN_ID } from '../bootstrap.js';
import { channelNameKey } from '../commands/channels/decider.js';
import { createChannel } from '../commands/channels/names.js';
import { apiKeys } from '../commands/keys/decider.js';
import { DEFAULT_TENANT } from '../commands/tenants/decider.js';
import type { Config } from '../config.js';
import { maskSecret } from '../crypto/secret-box.js';
import { UsageError } from '../errors.js';
import { keyPolicyOf } from '../imports/sink.js';
import { ownValue } from '../own.js';
import type { Logger } from '../logger.js';
import { hashKey, KEY_PREFIX } from '../relay/access/key-gate.js';
import { defaultChannelsFromEnv, ENV_CHANNEL_KINDS, ENV_CHANNEL_MODELS, envNamesOf, type DefaultChannel, type EnvChannelKind } from './default-channels.js';

export interface InitAnswers {
  provider?: string;
  key?: string;
  baseUrl?: string;
  models?: string;
}

const isKind = (text: string): text is EnvChannelKind => (ENV_CHANNEL_KINDS as readonly string[]).includes(text);

/** The channel the answers (or, without a provider, the one `<PROVIDER>_API_KEY` variable set) describe. */
export function initChannel(answers: InitAnswers, env: Readonly<Record<string, string | undefined>>): DefaultChannel {
  if (answers.provider === undefined) {
    const fromEnv = defaultChannelsFromEnv(env);
    if (fromEnv.problems.length > 0) throw new UsageError(`${fromEnv.problems[0]!.variable}: ${fromEnv.problems[0]!.message}`, 'init');
    if (fromEnv.channels.length === 1) return fromEnv.channels[0]!;
    if (fromEnv.channels.length > 1) throw new UsageError(`several provider keys are set (${fromEnv.channels.map((c) => c.source).join(', ')}): choose one with --provider`, 'init');
    throw new UsageError('name a provider and its key: --provider openai --key sk-… (or set one <PROVIDER>_API_KEY variable, e.g. OPENAI_API_KEY)', 'init');
  }
  const provider = answers.provider.trim().toLowerCase();
  if (!isKind(provider)) throw new UsageError(`--provider must be one of ${ENV_CHANNEL_KINDS.join(', ')} (got "${answers.provider}"; other kinds are added in the admin UI or API)`, 'init');
  const names = envNamesOf(provider);
  const key = answers.key ?? ownValue(env, names.apiKey);
  if (!key) throw new UsageError(`--key is missing (the ${provider} API key; or set ${names.apiKey})`, 'init');
  const built = defaultChannelsFromEnv({ [names.apiKey]: key, [names.baseUrl]: answers.baseUrl ?? ownValue(env, names.baseUrl), [names.models]: answers.models ?? ownValue(env, names.models) });
  if (built.problems.length > 0) throw new UsageError(`${built.problems[0]!.variable === names.baseUrl ? '--base-url' : '--models'}: ${built.problems[0]!.message}`, 'init');
  return built.channels[0]!;
}

/** Asks on the terminal; the key is read without echo. */
export async function askInitAnswers(given: InitAnswers, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr): Promise<InitAnswers> {
  let muted = false;
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input, output: out, terminal: true });
  try {
    const answers = { ...given };
    if (answers.provider === undefined) {
      output.write(`Providers: ${ENV_CHANNEL_KINDS.join(', ')}\n`);
      answers.provider = (await rl.question('Provider [openai]: ')).trim() || 'openai';
    }
    const kind = answers.provider.trim().toLowerCase();
    if (!isKind(kind)) return answers; // initChannel names the problem
    if (answers.key === undefined) {
      output.write(`${kind} API key (not shown): `);
      muted = true;
      answers.key = (await rl.question('')).trim();
      muted = false;
      output.write('\n');
    }
    if (answers.baseUrl === undefined) answers.baseUrl = (await rl.question('Base URL [the provider\'s own]: ')).trim() || undefined;
    if (answers.models === undefined) answers.models = (await rl.question(`Models [${ENV_CHANNEL_MODELS[kind].join(',')}]: `)).trim() || undefined;
    return answers;
  } finally {
    rl.close();
  }
}

export interface InitResult {
  channel: { id: string; name: string; created: boolean; models: string[] };
  apiKey: string;
}

/** Creates the channel (unless the tenant has one of that name) and a key of the root admin. */
export async function runInit(config: Config, logger: Logger, channel: DefaultChannel, keyName: string): Promise<InitResult> {
  const app = await createApp({ ...config, defaultChannels: [] }, logger);
  try {
    const { ctx } = app;
    const context = { tenantId: DEFAULT_TENANT, causationId: 'cli-init' };
    const existing = (await ctx.queries.channels(DEFAULT_TENANT)).find((c) => channelNameKey(c.name) === channelNameKey(channel.settings.name));
    let position = 0;
    let id = existing?.id ?? `ch_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
    if (!existing) {
      const created = await createChannel(ctx.commands, { type: 'CreateChannel', channelId: id, settings: channel.settings, key: { sealed: ctx.secrets.seal(channel.key), masked: maskSecret(channel.key) } }, context);
      position = created.position ?? 0;
    } else {
      id = existing.id;
    }
    const keyId = `key_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
    const secret = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const key = await ctx.commands.execute(apiKeys, keyId, { type: 'CreateApiKey', keyId, name: keyName, userId: ROOT_ADMIN_ID, keyHash: hashKey(secret), keyPrefix: secret.slice(0, 8), policy: keyPolicyOf() }, context);
    position = Math.max(position, key.position ?? 0);
    if (position > 0) await Promise.all([ctx.runner.waitFor(position), ctx.views.waitFor(position)]);
    return { channel: { id, name: channel.settings.name, created: !existing, models: existing ? (JSON.parse(existing.models) as string[]) : channel.settings.models }, apiKey: secret };
  } finally {
    await app.close();
  }
}

/** What to paste: curl, and the openai SDK in Python and Node. */
export function initSnippet(baseUrl: string, apiKey: string, model: string): string {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello' }] });
  return [
    `curl ${baseUrl}/v1/chat/completions -H "authorization: Bearer ${apiKey}" -H 'content-type: application/json' -d '${body}'`,
    '',
    '# Python (pip install openai)',
    `from openai import OpenAI`,
    `client = OpenAI(base_url="${baseUrl}/v1", api_key="${apiKey}")`,
    `print(client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Say hello"}]).choices[0].message.content)`,
    '',
    '// Node (npm install openai)',
    `import OpenAI from 'openai';`,
    `const client = new OpenAI({ baseURL: '${baseUrl}/v1', apiKey: '${apiKey}' });`,
    `console.log((await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Say hello' }] })).choices[0].message.content);`,
  ].join('\n');
}
