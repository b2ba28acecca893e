// bodykit/web as an edge route handler types it: a Request in, typed bodies and errors out.
import { isBodyParserError, readJson, readMultipart, readRaw, readText, type WebUploadedFile } from 'bodykit/web'

export async function POST (request: Request): Promise<Response> {
  try {
    const body = await readJson(request, { limit: '100kb', strict: true, onProtoPoisoning: 'error' })
    const bytes: Uint8Array | undefined = await readRaw(request, { type: ['application/pdf', 'bin'] })
    const text: string | undefined = await readText(request, { defaultCharset: 'utf-8', verify: (_req, _res, buf, encoding) => { if (buf.byteLength > 10 && encoding === null) throw new Error('no') } })
    const form = await readMultipart(request, { files: { fileSizeLimit: '5mb', fieldNames: ['avatar'] } })
    const files: WebUploadedFile[] = form?.files ?? []
    const first: Uint8Array | undefined = files[0]?.buffer
    return new Response(JSON.stringify({ body, size: bytes?.byteLength, text, first: first?.byteLength }))
  } catch (err) {
    if (isBodyParserError(err)) return new Response(err.type, { status: err.status })
    throw err
  }
}
