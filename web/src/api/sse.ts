/**
 * Server-sent events from a fetch body (the chat stream is a POST, which EventSource cannot send):
 * yields each event's `event` name and `data` text; `[DONE]` ends the stream.
 */
export interface SseEvent {
  event: string;
  data: string;
}

/** Splits SSE text into events; `rest` is the unfinished tail to prepend to the next chunk. */
export function parseSseChunk(text: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const normalized = text.replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const { events, rest } = parseSseChunk(buffer + decoder.decode(value, { stream: true }));
      buffer = rest;
      for (const e of events) {
        if (e.data === '[DONE]') return;
        yield e;
      }
    }
    const { events } = parseSseChunk(`${buffer}\n\n`);
    for (const e of events) if (e.data !== '[DONE]') yield e;
  } finally {
    reader.releaseLock();
  }
}
