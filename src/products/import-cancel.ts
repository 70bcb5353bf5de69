import http from 'node:http';
import https from 'node:https';

/** How long an interrupted import waits for the service to confirm its rollback (D38). */
const CONFIRM_WITHIN_MS = 5000;
const ASK_EVERY_MS = 250;

/** Sends an empty body under `key`; answers the status, or undefined when the service could not be asked. */
function askWithEmptyBody(url: URL, token: string, key: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/x-ndjson',
        Accept: 'application/json',
        'Idempotency-Key': key,
      },
      timeout: CONFIRM_WITHIN_MS,
    });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
    request.end();
  });
}

/**
 * After Ctrl-C: whether the service confirms that nothing of the import under `key` was stored. It is asked with
 * the same key and an empty body, which D38 answers by the key's state: 409 while the interrupted import still
 * runs (asked again), 422 once it was stored (another body), and otherwise runs the empty import, which stores
 * nothing and is refused with 400: the interrupted one was rolled back.
 */
export async function confirmCancelled(url: URL, token: string, key: string): Promise<boolean> {
  const deadline = Date.now() + CONFIRM_WITHIN_MS;
  for (;;) {
    const status = await askWithEmptyBody(url, token, key);
    if (status === 400) return true;
    if (status !== 409 || Date.now() + ASK_EVERY_MS >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, ASK_EVERY_MS));
  }
}
