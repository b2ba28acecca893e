// Loads each dependency an entry may not need, one function a package, when a middleware that can use it is created,
// so that a process pays only for what its middlewares can use, and no request loads a module (a load can fail: out of
// file descriptors, node_modules swapped under a running process). Why: qs (with its side-channel family), type-is (the
// MIME database), secure-json-parse, debug and the like cost 1 to 17 ms each to load; an app that reads only JSON, or only
// uploads, should not pay for the others (docs/dependencies.md lists what each factory loads). The heaviest have a module
// each (src/packages/), so that an entry's module graph, as a bundler sees it, holds only those it imports.
/* eslint-disable @typescript-eslint/no-require-imports */
import type CryptoModule from 'crypto'
import type DebugModule from 'debug'

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
 * Node's crypto: random names for files stored on disk (about 1.3 ms to load, which memory storage never needs). Loaded
 * when a middleware that stores on disk is created (a request's path loads no module).
 */
export const loadCrypto = /* @__PURE__ */ onFirstUse((): typeof CryptoModule => require('crypto') as typeof CryptoModule)

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
