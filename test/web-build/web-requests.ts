// Requests for the Web build's tests: a body streamed in the pieces drawn or given whole, and a reader's outcome in a comparable form.
import { describeError, serialise } from '../differential/harness'

/** A Request whose body arrives in the drawn pieces, as a runtime streams an upload, or is given whole. */
export function webRequest (headers: Record<string, string>, chunks: Buffer[], asBytes: boolean): Request {
  if (asBytes) return new Request('http://127.0.0.1/upload', { method: 'POST', headers, body: Buffer.concat(chunks) })
  const queue = [...chunks]
  const body = new ReadableStream<Uint8Array>({
    pull (controller) {
      const chunk = queue.shift()
      if (chunk === undefined) controller.close()
      else controller.enqueue(new Uint8Array(chunk))
    }
  })
  return new Request('http://127.0.0.1/upload', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

/** Bytes compare as bytes: the Node build gives Buffers where the Web build gives Uint8Arrays (docs/web.md). */
function asBytes (value: unknown): unknown {
  if (Array.isArray(value)) {
    if ((value[0] === 'Buffer' || value[0] === 'Uint8Array') && value.length === 3) return ['bytes', value[2]]
    return value.map(asBytes)
  }
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asBytes(v)]))
  return value
}

/** A reader's value or error, described for deepEqual (bytes as bytes), or a rejection after 5 s: a hang. */
export async function settle (reading: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise((_resolve, reject) => { timer = setTimeout(() => { reject(new Error('hang: the reader did not settle')) }, 5000) })
  return await Promise.race([reading.then((value) => ({ value: serialise(value) }), (err: unknown) => ({ error: describeError(err) })), hang])
    .then(asBytes).finally(() => { clearTimeout(timer) })
}

