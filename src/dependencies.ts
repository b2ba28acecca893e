// Loads each dependency an entry may not need on first use, one function a package, so that a process pays only for what its
// middlewares can use. Why: qs (with its side-channel family), type-is (the MIME database), secure-json-parse, debug and
// the like cost 1 to 17 ms each to load; an app that reads only JSON, or only uploads, should not pay for the others
// (docs/dependencies.md lists what each entry loads). The heaviest have a module each (src/packages/), so that an entry's
// module graph, as a bundler sees it, holds only those it imports. Each loader keeps what it loaded (onFirstUse): some
// are called per request, where a require() of a cached module would still cost a module lookup.
/* eslint-disable @typescript-eslint/no-require-imports */
import type ContentTypeModule from 'content-type'
import type CryptoModule from 'crypto'
import type DebugModule from 'debug'
import type OnFinishedModule from 'on-finished'

/**
 * A loader that calls `load` once, on its first call, and then hands back what it gave. The `require()` stays
 * written out in each loader, so that bundlers still see the package it names; each loader is marked pure, so that a
 * bundle of src/ that imports one loader leaves the others, and their packages, out (test/web-build/tree-shaking.test.ts).
 */
export function onFirstUse<T> (load: () => T): () => T {
  let value: T | undefined
  return () => (value ??= load())
}

/**
 * content-type: the default entry's lenient reading of a Content-Type (each header text once: it is cached), and a
 * multipart boundary; bodykit/legacy reads with its own strict grammar and never needs it.
 */
export const loadContentType = /* @__PURE__ */ onFirstUse((): typeof ContentTypeModule => require('content-type') as typeof ContentTypeModule)

/** Node's crypto: random names for files stored on disk (about 1.3 ms to load, which memory storage never needs). */
export const loadCrypto = /* @__PURE__ */ onFirstUse((): typeof CryptoModule => require('crypto') as typeof CryptoModule)

/**
 * on-finished: the default entry's "already read" check and the waits on a response's or request's end (a refused
 * body's read-off, stored files); bodykit/legacy's successful reads never need it.
 */
export const loadOnFinished = /* @__PURE__ */ onFirstUse((): typeof OnFinishedModule => require('on-finished') as typeof OnFinishedModule)

/** What the pipeline calls to log: debug's Debugger, or a silent one when debug is not in use. */
export type Log = Pick<DebugModule.Debugger, 'enabled'> & ((formatter: unknown, ...args: unknown[]) => void)

/** A debugger that is never enabled: debug stays unloaded (its load, with supports-color and ms, costs about 3 ms). */
const silent: Log = Object.assign(() => {}, { enabled: false })

/**
 * A `bodykit:*` debugger. debug is loaded only where it can be on: `DEBUG` is set, or the app has loaded debug (whose
 * `enable()` may name bodykit's namespaces). An app that first loads debug after creating its middleware gets no
 * output from those middlewares (docs/api.md, Debugging).
 */
export function createLog (namespace: string): Log {
  if (!process.env.DEBUG && !isLoaded('debug')) return silent
  return (require('debug') as typeof DebugModule)(namespace)
}

/** Whether the copy of a package that bodykit would load is already in Node's module cache. */
function isLoaded (name: string): boolean {
  try {
    return require.cache[require.resolve(name)] !== undefined
  } catch {
    return false
  }
}
