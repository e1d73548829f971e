/**
 * The relay's upstream stream parsing on its own (no servers): how long the serving thread is
 * held by one huge SSE line arriving in 64 KB pieces (total and longest single push), and the
 * OpenAI-compatible converter's cost per forwarded event (the streaming hot path).
 *
 *   npx tsx bench/upstream-streams.ts [--line-mb N] [--rounds N]
 */
import { parseArgs } from 'node:util';
import { createCompatStreamConverter } from '../src/relay/providers/openai-compatible/stream.js';
import { SseParser } from '../src/relay/sse.js';

const { values } = parseArgs({ options: { 'line-mb': { type: 'string', default: '10' }, rounds: { type: 'string', default: '10' } } });
const lineBytes = Number(values['line-mb']) * 1024 * 1024;
const rounds = Number(values.rounds);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

// 1. One line of `lineBytes`, in 64 KB pieces, under a limit that lets it through.
const piece = 'x'.repeat(64 * 1024);
const totals: number[] = [];
const longest: number[] = [];
for (let r = 0; r < rounds; r++) {
  const parser = new SseParser(lineBytes * 2);
  let max = 0;
  const t0 = performance.now();
  parser.push('data: ');
  for (let sent = 0; sent < lineBytes; sent += piece.length) {
    const t = performance.now();
    parser.push(piece);
    max = Math.max(max, performance.now() - t);
  }
  parser.push('\n\n');
  totals.push(performance.now() - t0);
  longest.push(max);
}
console.log(`${values['line-mb']} MB SSE line in 64 KB pieces: total ${median(totals).toFixed(1)} ms, longest push ${median(longest).toFixed(3)} ms (medians of ${rounds})`);

// 2. A typical compatible stream: 200 content chunks and a usage chunk, one event per push.
const meta = { id: 'chatcmpl-x', created: 1, model: 'm', includeUsage: false };
const events = Array.from({ length: 200 }, (_, i) =>
  Buffer.from(`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"token ${i} "},"logprobs":null,"finish_reason":null}]}\n\n`),
);
events.push(Buffer.from('data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":200,"total_tokens":205}}\n\ndata: [DONE]\n\n'));
const perEvent: number[] = [];
for (let r = 0; r < rounds; r++) {
  const streams = 500;
  const t0 = performance.now();
  for (let s = 0; s < streams; s++) {
    const converter = createCompatStreamConverter(meta);
    for (const event of events) converter.push(event);
    converter.end();
  }
  perEvent.push(((performance.now() - t0) * 1e6) / (streams * events.length));
}
console.log(`openai-compatible converter: ${median(perEvent).toFixed(0)} ns per event (median of ${rounds} x 500 streams of ${events.length} events)`);
