/**
 * What the MAX_JSON_DEPTH scan costs next to the parse it guards: `jsonDepthExceeds` and
 * `JSON.parse` on chat-shaped bodies of a few sizes (mostly message text, as real requests are).
 *
 *   npx tsx bench/json-body.ts [--iterations N]
 */
import { jsonDepthExceeds } from '../src/api/json-body.js';

const iterations = Number(process.argv[process.argv.indexOf('--iterations') + 1]) || 2_000;

/** Message text: plain prose (most requests), or dense with quotes, backslashes and brackets (the scan's worst case). */
const TEXTS = {
  prose: 'The quick brown fox jumps over the lazy dog, then it naps for a while.\n',
  quotes: 'The quick "brown" fox [jumps] over {the} lazy dog, \\ twice. ',
};

/** A chat request of about `bytes`: messages of `sentence` repeated. */
function chatBody(bytes: number, sentence: string): string {
  const messages: Array<{ role: string; content: string }> = [];
  let size = 0;
  while (size < bytes) {
    const content = sentence.repeat(Math.max(1, Math.floor(Math.min(2_000, bytes - size) / sentence.length)));
    messages.push({ role: messages.length % 2 === 0 ? 'user' : 'assistant', content });
    size += content.length + 40;
  }
  return JSON.stringify({ model: 'gpt-4o-mini', messages, temperature: 0.2, stream: true, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }] });
}

function timePerCall(fn: () => unknown): number {
  for (let i = 0; i < Math.min(200, iterations); i++) fn(); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - t0) / iterations / 1_000; // µs
}

console.log('text     body      scan µs   JSON.parse µs   scan/parse');
for (const [kind, sentence] of Object.entries(TEXTS)) for (const bytes of [1_000, 10_000, 100_000, 1_000_000]) {
  const body = chatBody(bytes, sentence);
  if (jsonDepthExceeds(body, 128)) throw new Error('unexpected: too deep');
  const scan = timePerCall(() => jsonDepthExceeds(body, 128));
  const parse = timePerCall(() => JSON.parse(body));
  console.log(`${kind.padEnd(7)} ${(body.length / 1000).toFixed(0).padStart(5)} KB  ${scan.toFixed(2).padStart(8)}  ${parse.toFixed(2).padStart(14)}  ${(scan / parse).toFixed(3).padStart(10)}`);
}
