// What the pipeline asks of a request, whatever it came from: one small interface, answered by a Node request's source and a Web Request's.
import type { IncomingMessage, ServerResponse } from 'http'
import type { Readable } from 'stream'
import type { DiscardBudget } from '../options'

/**
 * Where a Web Request's view (sources/web.ts) carries its source: telling a view apart, and finding its source, needs
 * nothing loaded (the module that makes views is loaded by then).
 */
export const VIEW_SOURCE: unique symbol = Symbol('bodykit.requestView')

/**
 * What a read's owner knows besides settling it: whom to tell when the connection closes while the read still
 * waits, set by the path that may wait on user code (a streaming stage). One object per read, so that watching the
 * connection needs no closure of its own.
 */
export interface ReadLifetime {
  onGone: (() => void) | null
}

/**
 * A kind of request, as the pipeline reads it. Each method takes the request (a source holds no per-request state,
 * so choosing one costs a type check): a Node `IncomingMessage` or a stream with `headers` as tests build them, or
 * the view of a Web `Request`.
 */
export interface RequestSource {
  /** A header, by its lower-case name. */
  header (req: IncomingMessage, name: string): string | undefined
  /** Whether the request carries a body to read. */
  hasBody (req: IncomingMessage, readHttp2WithoutLength: boolean): boolean
  /** A Content-Length that is not digits, which nothing before the pipeline refused; else null. */
  malformedLength (req: IncomingMessage): string | null
  /** Takes the body for this read, once it is decided to read it: false when another reader holds it (it is theirs). */
  claimBody (req: IncomingMessage): boolean
  /** The body as a Node stream (the request itself, or one made for it); the pipeline asks once per read. */
  bodyStream (req: IncomingMessage): Readable
  /**
   * Reads the whole body its own way, with raw-body's `limit` and length rules, and calls back once: false when the
   * pipeline is to read the stream with raw-body instead.
   */
  readWhole (req: IncomingMessage, limit: number, callback: (err: Error | null, bytes?: Buffer) => void): boolean
  /**
   * Ends the read if its connection or stream closes under it (the body is aborted), and calls `lifetime.onGone`
   * when the connection closes while the read may still wait (on user code); returns what stops watching, or null.
   */
  watchRead (req: IncomingMessage, body: Readable, lifetime: ReadLifetime): (() => void) | null
  /**
   * What is left of a refused body: read off within `budget` (a connection stays usable) or cancelled. `onSettled`
   * runs once the body ended or was given up on.
   */
  discardRest (req: IncomingMessage, body: Readable, res: ServerResponse | undefined, budget: DiscardBudget, onSettled?: () => void): void
}
