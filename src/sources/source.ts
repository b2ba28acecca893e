// Which source answers for a request: a Web Request's view, or a Node request; and a header, asked of either.
import type { IncomingHttpHeaders } from 'http'
import { onFirstUse } from '../dependencies'
import { nodeSource } from './node'
import { IS_REQUEST_VIEW, type RequestSource } from './request-source'
import type { RequestView } from './web'

export type { RequestSource } from './request-source'

/** The Web source's module, loaded with the first view: only the readers make views, so the middlewares never load it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadWeb = onFirstUse((): typeof import('./web') => require('./web') as typeof import('./web'))

function isRequestView (req: object): req is RequestView {
  return (req as { [IS_REQUEST_VIEW]?: unknown })[IS_REQUEST_VIEW] === true
}

/** The source of a request: a Web Request's view, else a Node request. */
export function sourceOf (req: object): RequestSource {
  return isRequestView(req) ? loadWeb().webSource : nodeSource
}

/** A request header as the pipeline reads it (a lower-case name), whatever the request came from. */
export function headerOf (req: { readonly headers: IncomingHttpHeaders }, name: string): string | undefined {
  return isRequestView(req) ? req.header(name) : req.headers[name] as string | undefined
}
