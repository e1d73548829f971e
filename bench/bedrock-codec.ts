/**
 * What Bedrock's per-request and per-event code costs here next to the AWS packages that do the
 * same (decision 0110):
 * - SigV4 signing of a Converse request: src/relay/providers/bedrock/sigv4.ts vs
 *   `@smithy/signature-v4` with `@smithy/hash-node`'s SHA-256 `Hash` (as the AWS SDK sets it up;
 *   one signer per channel, so its signing-key cache is warm). Both signatures are checked equal.
 * - Decoding a ConverseStream body (50 frames with CRCs) cut into chunks: eventstream.ts's
 *   EventStreamDecoder vs `@smithy/eventstream-codec`'s EventStreamCodec behind a prelude-length
 *   splitter (the codec decodes whole messages only), bare, and as a drop-in for our decoder
 *   (prelude CRC and length limit checked before buffering, our message shape out).
 *
 *   npx tsx bench/bedrock-codec.ts [--iterations N] [--rounds R]
 *
 * Reports µs per operation (median and minimum of 20 batches, the sides taking turns) and JS-heap
 * bytes allocated per operation (heap growth plus what the garbage collector reclaimed meanwhile,
 * from v8.GCProfiler; Buffer backing stores live outside that heap and are not counted), one
 * block per round.
 */
import { GCProfiler } from 'node:v8';
import { percentile } from './stats.js';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { EventStreamCodec, type Message, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { signRequest } from '../src/relay/providers/bedrock/sigv4.js';
import { crc32, encodeMessage, EventStreamDecoder, headerString, MAX_MESSAGE_LENGTH, type EventStreamMessage, type HeaderValue } from '../src/relay/providers/bedrock/eventstream.js';
import { BEDROCK_SERVICE, bedrockBaseUrl, converseUrl, toConverseRequest } from '../src/relay/providers/bedrock/request.js';
import type { ChatCompletionRequest } from '../src/relay/schema.js';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]) || fallback;
}
const iterations = option('--iterations', 20_000);
const rounds = option('--rounds', 5);

interface Measure {
  us: number;
  heapBytes: number;
}

function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}

/** µs and JS-heap bytes per call of `fn` over `count` calls. */
async function batch(count: number, fn: () => unknown): Promise<Measure> {
  const profiler = new GCProfiler();
  profiler.start();
  const before = heapUsed();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await fn();
  const elapsed = Number(process.hrtime.bigint() - t0);
  const after = heapUsed();
  const reclaimed = profiler.stop().statistics.reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
  return { us: elapsed / count / 1_000, heapBytes: (after - before + reclaimed) / count };
}

interface Summary {
  min: number;
  median: number;
  heapBytes: number;
}

/**
 * Each side in turn, batch after batch (20 each, `count` calls in all per side), so load from
 * other processes falls on every side alike; the minimum is the least disturbed batch.
 */
async function compare(count: number, sides: ReadonlyArray<() => unknown>): Promise<Summary[]> {
  const batches = 20;
  const per = Math.max(1, Math.floor(count / batches));
  for (let i = 0; i < Math.min(1_000, count); i++) for (const side of sides) await side();
  const measures = sides.map(() => [] as Measure[]);
  for (let i = 0; i < batches; i++) for (const [j, side] of sides.entries()) measures[j]!.push(await batch(per, side));
  return measures.map((ms) => {
    const us = ms.map((m) => m.us).sort((x, y) => x - y);
    return { min: us[0]!, median: percentile(us, 50), heapBytes: percentile(ms.map((m) => m.heapBytes).sort((x, y) => x - y), 50) };
  });
}

// --- SigV4: the request bedrock's request.ts signs --------------------------------------------

const REGION = 'us-east-1';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const signingDate = new Date('2026-11-24T12:00:00Z');

function chatRequest(bytes: number): ChatCompletionRequest {
  const sentence = 'The quick brown fox jumps over the lazy dog, then it naps for a while. ';
  const messages: ChatCompletionRequest['messages'] = [{ role: 'system', content: 'You are a helpful assistant.' }];
  while (JSON.stringify(messages).length < bytes) messages.push({ role: messages.length % 2 === 1 ? 'user' : 'assistant', content: sentence.repeat(12) });
  if (messages.at(-1)!.role !== 'user') messages.push({ role: 'user', content: sentence });
  return { model: MODEL, messages, stream: true, max_tokens: 512, temperature: 0.2 } as ChatCompletionRequest;
}

const smithySigner = new SignatureV4({ credentials, region: REGION, service: BEDROCK_SERVICE, sha256: Hash.bind(null, 'sha256') });

function signOurs(url: string, body: string): Record<string, string> {
  return signRequest({ method: 'POST', url, body, region: REGION, service: BEDROCK_SERVICE, credentials, now: signingDate }).headers;
}

async function signSmithy(url: string, body: string): Promise<Record<string, string>> {
  const { host, pathname } = new URL(url);
  const request = new HttpRequest({ method: 'POST', protocol: 'https:', hostname: host, path: pathname, headers: { host }, body });
  const signed = await smithySigner.sign(request, { signingDate });
  const { host: _host, ...headers } = signed.headers;
  return headers;
}

// --- Event stream: a ConverseStream body ------------------------------------------------------

const EVENT_COUNT = 50;

/** messageStart, text deltas, contentBlockStop, messageStop, metadata: as Bedrock sends them (with its `p` padding). */
function converseStreamFrames(): Buffer[] {
  const frame = (type: string, payload: object) => encodeMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ'.slice(0, 10 + (type.length % 20)) }));
  const words = ['Sure', ', here', ' is', ' a', ' short', ' answer', ' about', ' relays', ' and', ' event', ' streams', '.'];
  const frames = [frame('messageStart', { role: 'assistant' })];
  for (let i = 0; frames.length < EVENT_COUNT - 3; i++) frames.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: words.slice(0, 1 + (i % 5)).join('') + words[i % words.length] } }));
  frames.push(frame('contentBlockStop', { contentBlockIndex: 0 }));
  frames.push(frame('messageStop', { stopReason: 'end_turn' }));
  frames.push(frame('metadata', { usage: { inputTokens: 812, outputTokens: 231, totalTokens: 1043 }, metrics: { latencyMs: 2210 } }));
  return frames;
}

/** The body cut at pseudo-random places (1 to 512 bytes a chunk; seeded, so every run cuts alike). */
function splitArbitrarily(body: Buffer): Buffer[] {
  let seed = 42;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const size = 1 + Math.floor(next() * 512);
    chunks.push(body.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

function decodeOurs(chunks: readonly Buffer[]): number {
  const decoder = new EventStreamDecoder();
  let events = 0;
  for (const chunk of chunks) events += decoder.push(chunk).length;
  if (decoder.error) throw decoder.error;
  return events;
}

/** Frames whole messages out of chunks by the prelude's total length, for EventStreamCodec.decode. */
class MessageSplitter {
  private pending: Buffer[] = [];
  private buffered = 0;

  /** `checkPrelude`: what our decoder does before trusting the length (CRC of the first 8 bytes, the length limit). */
  constructor(private readonly checkPrelude: boolean) {}

  push(chunk: Buffer): Buffer[] {
    this.pending.push(chunk);
    this.buffered += chunk.length;
    const messages: Buffer[] = [];
    while (this.buffered >= 12) {
      if (this.pending[0]!.length < 12) this.pending = [Buffer.concat(this.pending)];
      const first = this.pending[0]!;
      const total = first.readUInt32BE(0);
      if (this.checkPrelude && (crc32(first.subarray(0, 8)) !== first.readUInt32BE(8) || total > MAX_MESSAGE_LENGTH)) throw new Error('bad prelude');
      if (this.buffered < total) break;
      const joined = this.pending.length === 1 ? first : Buffer.concat(this.pending);
      messages.push(joined.subarray(0, total));
      const rest = joined.subarray(total);
      this.pending = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
    }
    return messages;
  }
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The codec as it comes: whole messages in, its own message shape out. */
function decodeSmithyBare(chunks: readonly Buffer[]): number {
  const splitter = new MessageSplitter(false);
  let events = 0;
  for (const chunk of chunks) {
    for (const bytes of splitter.push(chunk)) {
      const message: Message = codec.decode(bytes);
      if (message.headers[':message-type']?.value === 'event') events++;
    }
  }
  return events;
}

/** Our header shape from the codec's: a null-prototype record, `long` as bigint, `binary` as Buffer. */
function ourHeaders(headers: MessageHeaders): Record<string, HeaderValue> {
  const out = Object.create(null) as Record<string, HeaderValue>;
  for (const [name, header] of Object.entries(headers)) {
    if (header.type === 'long') out[name] = { type: 'long', value: Buffer.from(header.value.bytes).readBigInt64BE(0) };
    else if (header.type === 'binary') out[name] = { type: 'binary', value: Buffer.from(header.value) };
    else out[name] = header;
  }
  return out;
}

/** What EventStreamDecoder would be on top of the codec: the prelude checked first, our message shape out (payload copied, as ours). */
function decodeSmithyDropIn(chunks: readonly Buffer[]): number {
  const splitter = new MessageSplitter(true);
  let events = 0;
  for (const chunk of chunks) {
    for (const bytes of splitter.push(chunk)) {
      const decoded = codec.decode(bytes);
      const message: EventStreamMessage = { headers: ourHeaders(decoded.headers), payload: Buffer.from(decoded.body) };
      if (headerString(message, ':message-type') === 'event') events++;
    }
  }
  return events;
}

// --- Run ---------------------------------------------------------------------------------------

const url = converseUrl(bedrockBaseUrl({ region: REGION }), MODEL, true);
const bodies = [2_000, 100_000].map((bytes) => JSON.stringify(toConverseRequest(chatRequest(bytes))));
for (const body of bodies) {
  const ours = signOurs(url, body);
  const theirs = await signSmithy(url, body);
  if (ours.authorization !== theirs.authorization) throw new Error(`signatures differ:\n${ours.authorization}\n${theirs.authorization}`);
}

const frames = converseStreamFrames();
const streamBody = Buffer.concat(frames);
const splits = { 'a frame a chunk': frames, '1-512 B chunks': splitArbitrarily(streamBody) };
for (const chunks of Object.values(splits)) {
  if ([decodeOurs, decodeSmithyBare, decodeSmithyDropIn].some((decode) => decode(chunks) !== EVENT_COUNT)) throw new Error('a decoder lost events');
}

console.log(`node ${process.version}; ${iterations} calls a side a measure (20 batches, the sides taking turns); signatures identical; ${EVENT_COUNT} events, ${streamBody.length} bytes a stream`);
console.log('µs: median (min) per op; KB: JS heap allocated per op, median batch; ratios to ours: median (min)');
const side = (m: Summary, scale = 1) => `${(m.median / scale).toFixed(2).padStart(7)} (${(m.min / scale).toFixed(2).padStart(6)}) µs ${(m.heapBytes / scale / 1024).toFixed(2).padStart(5)} KB`;
const ratio = (m: Summary, ours: Summary) => `${(m.median / ours.median).toFixed(2)} (${(m.min / ours.min).toFixed(2)})`;
for (let round = 1; round <= rounds; round++) {
  const lines: string[] = [];
  for (const body of bodies) {
    const [ours, smithy] = await compare(iterations, [() => signOurs(url, body), () => signSmithy(url, body)]);
    lines.push(`sign, ${`${(body.length / 1000).toFixed(0)} KB body`.padEnd(22)} ours ${side(ours!)} | smithy ${side(smithy!)} ${ratio(smithy!, ours!)}`);
  }
  for (const [name, chunks] of Object.entries(splits)) {
    const [ours, bare, dropIn] = await compare(Math.max(20, Math.floor(iterations / 10)), [() => decodeOurs(chunks), () => decodeSmithyBare(chunks), () => decodeSmithyDropIn(chunks)]);
    lines.push(`decode/event, ${name.padEnd(16)} ours ${side(ours!, EVENT_COUNT)} | codec bare ${side(bare!, EVENT_COUNT)} ${ratio(bare!, ours!)} | as drop-in ${side(dropIn!, EVENT_COUNT)} ${ratio(dropIn!, ours!)}`);
  }
  console.log(`round ${round}\n  ${lines.join('\n  ')}`);
}
