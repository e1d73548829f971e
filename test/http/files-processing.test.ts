/**
 * File processing across restarts (embedded): a file stored while processing was off
 * (FILE_PROCESSING_ENGINE=none) stays `uploaded` and is not usable in chat; the next start with
 * the engine on picks it up and processes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { fileForm } from '../support/files.js';

describe('file processing at startup', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-files-'));
  let running: RunningApp | null = null;
  afterAll(async () => {
    await running?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('processes the files an earlier run left uploaded', async () => {
    running = await startApp({ FILE_PROCESSING_ENGINE: 'none', HEALTH_CHECK_ENABLED: 'false' }, { keepDataDir: dataDir });
    const res = await fetch(`${running.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${running.userToken}` }, body: fileForm('read me later', 'later.txt') });
    const file = (await res.json()) as { id: string; status: string };
    expect(res.status).toBe(201);
    expect(file.status).toBe('uploaded');
    const notReady = await call(`${running.url}/v1/files/${file.id}/text`, { token: running.userToken });
    expect(notReady.status).toBe(409);
    expect(notReady.json.error).toMatchObject({ code: 'file_not_ready', message: expect.stringContaining('uploaded') });
    await expect(running.app.ctx.files.attachments.attach({ tenantId: 'default', userId: running.userId }, file.id)).rejects.toMatchObject({ code: 'file_not_ready' });
    await running.close();
    running = null;

    running = await startApp({ HEALTH_CHECK_ENABLED: 'false' }, { keepDataDir: dataDir });
    // Processed in the background: poll until the read model shows it.
    for (let i = 0; i < 400; i++) {
      if ((await call(`${running.url}/v1/files/${file.id}`, { token: running.userToken })).json.status === 'processed') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const text = await call(`${running.url}/v1/files/${file.id}/text`, { token: running.userToken });
    expect(text.status, text.text).toBe(200);
    expect(text.json).toMatchObject({ text: 'read me later', truncated: false });
    expect((await call(`${running.url}/v1/files/${file.id}`, { token: running.userToken })).json.status).toBe('processed');
  });
});
