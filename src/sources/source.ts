// Which source answers for a request: a Web Request's view, or a Node request; and a header, asked of either.
import type { IncomingHttpHeaders } from 'http'
import { nodeSource } from './node'
import type { RequestSource } from './request-source'
import { RequestView, webSource } from './web'

export type { RequestSource } from './request-source'

/** The source of a request: a Web Request's view, else a Node request. */
export function sourceOf (req: object): RequestSource {
  return req instanceof RequestView ? webSource : nodeSource
}

/** A request header as the pipeline reads it (a lower-case name), whatever the request came from. */
export function headerOf (req: { readonly headers: IncomingHttpHeaders }, name: string): string | undefined {
  return req instanceof RequestView ? req.header(name) : req.headers[name] as string | undefined
}
