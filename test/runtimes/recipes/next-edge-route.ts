// Recipe (docs/web.md): a Next.js route handler on the edge runtime reading JSON with bodykit/web (app/api/echo/route.ts).
// In an app the import is 'bodykit/web'; the test bundles this file with src/web mapped to the Web bundle and runs POST in edge-runtime.
import { isBodyParserError, readJson } from '../../../src/web'

export const runtime = 'edge'

export async function POST (request: Request): Promise<Response> {
  try {
    const body = await readJson(request, { limit: '100kb' })
    return Response.json({ received: body })
  } catch (err) {
    if (!isBodyParserError(err)) throw err
    return new Response(JSON.stringify({ error: err.type }), { status: err.status, headers: { 'content-type': 'application/json' } })
  }
}
