// The h3 2 app the h3 runtime tests serve (test/runtimes/h3-harness.ts): each route reads the body with bodykit/h3, and
// its twin under /h3/ with h3 2's own reader, so that a runtime's answers can be compared with h3's on the same request.
// No error handler: h3 answers a thrown HTTPError as JSON `{ status, statusText, message, data }`.
// In an app both imports are 'h3' and 'bodykit/h3'; the harness's esbuild resolves 'h3' (this file's 'h3-2' and bodykit's
// own import) to h3 2, and src/h3 to the build under test: the Web bundle (src/h3-web.mts) or the Node build (dist/h3.mjs).
import {
  H3, readBody as h3ReadBody, readMultipartFormData as h3ReadMultipartFormData, readRawBody as h3ReadRawBody,
  readValidatedBody as h3ReadValidatedBody, type H3Event
} from 'h3-2'
import { readBody, readMultipartFormData, readRawBody, readValidatedBody } from '../../src/h3'

/** A part as the routes answer it: its name, filename and type as listed, its size, and a digest of its bytes. */
export interface PartSummary { name?: string, filename?: string, type?: string, size: number, sha256: string }

type PartList = Array<{ name?: string, filename?: string, type?: string, data: Uint8Array }> | undefined

async function summarize (parts: PartList): Promise<PartSummary[] | null> {
  if (parts === undefined) return null
  const summaries: PartSummary[] = []
  for (const { name, filename, type, data } of parts) {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>))
    summaries.push({ name, filename, type, size: data.byteLength, sha256: Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('') })
  }
  return summaries
}

/** What /validated accepts: an object whose `n` is a number. */
const hasNumber = (body: unknown): boolean => typeof (body as { n?: unknown } | null)?.n === 'number'

/** The app, whose `GET /runtime` names the runtime and the build it runs on (workerd's start is awaited on it). */
export function createApp (runtime: string, build: string): H3 {
  const app = new H3()
  app.get('/runtime', () => ({ runtime, build }))

  app.post('/json', async (event) => ({ body: await readBody(event) }))
  app.post('/form', async (event) => ({ body: await readBody(event) }))
  app.post('/limited', async (event) => ({ body: await readBody(event, { limit: 16 }) }))
  app.post('/raw', async (event) => ({ length: (await readRawBody(event, false))?.byteLength ?? null }))
  app.post('/parts', async (event) => ({ parts: await summarize(await readMultipartFormData(event)) }))
  app.post('/validated', async (event) => ({ body: await readValidatedBody(event, hasNumber) }))

  // h3 2's own readers on the same requests.
  app.post('/h3/json', async (event: H3Event) => ({ body: await h3ReadBody(event) }))
  app.post('/h3/form', async (event: H3Event) => ({ body: await h3ReadBody(event) }))
  app.post('/h3/raw', async (event: H3Event) => ({ length: (await h3ReadRawBody(event, false))?.byteLength ?? null }))
  app.post('/h3/parts', async (event: H3Event) => ({ parts: await summarize(await h3ReadMultipartFormData(event)) }))
  app.post('/h3/validated', async (event: H3Event) => ({ body: await h3ReadValidatedBody(event, hasNumber) }))
  return app
}
