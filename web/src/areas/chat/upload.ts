/**
 * File uploads with progress: XMLHttpRequest (fetch reports no upload progress), same-origin with
 * the session cookie; one refresh of the session on 401, as the API client does.
 */
import { ApiError, refreshSession } from '../../api/client';
import type { FileObject } from './types';

function once(file: File, onProgress: (fraction: number) => void): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/v1/files');
    xhr.withCredentials = true;
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => resolve({ status: xhr.status, body: xhr.responseText });
    xhr.onerror = () => reject(new Error('network error'));
    const form = new FormData();
    form.append('purpose', 'chat');
    form.append('file', file);
    xhr.send(form);
  });
}

/** The server's error body as an ApiError. */
export function uploadError(status: number, body: string): ApiError {
  try {
    const e = (JSON.parse(body) as { error?: { message?: string; code?: string | null; param?: string | null } }).error;
    if (e?.message) return new ApiError(status, e.message, e.code ?? null, e.param ?? null);
  } catch {
    // not JSON
  }
  return new ApiError(status, `upload failed (${status})`);
}

export async function uploadFile(file: File, onProgress: (fraction: number) => void): Promise<FileObject> {
  let answer = await once(file, onProgress);
  if (answer.status === 401 && (await refreshSession())) answer = await once(file, onProgress);
  if (answer.status < 200 || answer.status >= 300) throw uploadError(answer.status, answer.body);
  return JSON.parse(answer.body) as FileObject;
}
