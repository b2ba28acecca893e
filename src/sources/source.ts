// Which source answers for a request: a Web Request's view, or a Node request; and a header, asked of either.
import type { IncomingHttpHeaders } from 'http'
import { nodeSource } from './node'
import { VIEW_SOURCE, type RequestSource } from './request-source'
import type { RequestView } from './web'

export type { RequestSource } from './request-source'

function isRequestView (req: object): req is RequestView {
  return (req as { [VIEW_SOURCE]?: unknown })[VIEW_SOURCE] !== undefined
}

/**
 * The source of a request: a Web Request's view's own (only the readers make views, so the middlewares never load
 * that module), else a Node request's.
 */
export function sourceOf (req: object): RequestSource {
  return isRequestView(req) ? req[VIEW_SOURCE] : nodeSource
}

/** A request header as the pipeline reads it (a lower-case name), whatever the request came from. */
export function headerOf (req: { readonly headers: IncomingHttpHeaders }, name: string): string | undefined {
  return isRequestView(req) ? req.header(name) : req.headers[name] as string | undefined
}
