// The multer options a Nest upload interceptor runs with: MulterModule's and the route's merged, Nest's default `parts`
// limit added, and the fileFilter guarded so that a throw or a rejection fails the request.

/** The options these helpers touch; every other one is handed to bodykit/multer as it is. */
export interface NestUploadOptions {
  limits?: unknown
  fileFilter?: unknown
  [option: string]: unknown
}

/** The parts (fields and files) a request may have when `limits.parts` is not set: @nestjs/platform-express's default. */
export const DEFAULT_PARTS_LIMIT = 1000

/**
 * The module's options with the route's on top. compat(nest): a route option that is null or undefined (an unset
 * configuration value) keeps the module's, as in @nestjs/platform-express.
 */
export function mergeUploadOptions (moduleOptions: object | null | undefined, localOptions: object | null | undefined): NestUploadOptions {
  const merged: NestUploadOptions = { ...moduleOptions }
  for (const [name, value] of Object.entries(localOptions ?? {})) {
    if (value !== null && value !== undefined) merged[name] = value
  }
  return merged
}

/**
 * Adds Nest's defaults: `parts` where the limits (or what a `limits` function returns) leave it unset, since multer's
 * own default is no limit; and a fileFilter whose throw or rejection is handed to its callback.
 */
export function withNestDefaults (options: NestUploadOptions): NestUploadOptions {
  const { limits, fileFilter } = options
  return {
    ...options,
    ...(typeof fileFilter === 'function' && { fileFilter: guardFileFilter(fileFilter as FileFilter) }),
    limits: typeof limits === 'function'
      ? (req: unknown) => withDefaultParts((limits as (req: unknown) => unknown)(req))
      : withDefaultParts(limits)
  }
}

function withDefaultParts (limits: unknown): Record<string, unknown> {
  const given = limits as Record<string, unknown> | null | undefined
  return { ...given, parts: given?.parts ?? DEFAULT_PARTS_LIMIT }
}

type FileFilterCallback = (error: unknown, acceptFile?: boolean) => void
type FileFilter = (req: unknown, file: unknown, callback: FileFilterCallback) => unknown

/**
 * A fileFilter whose throw, or whose promise's rejection, before it called back, is its callback's error: the request
 * fails with it (a falsy value is wrapped in an Error, since multer reads a falsy error as none). Only its first answer
 * counts. A throw after it called back is left to bodykit/multer, which fails the request with it; a rejection after it
 * called back is ignored. compat(nest): @nestjs/platform-express rethrows that one too, where nothing catches it.
 */
function guardFileFilter (fileFilter: FileFilter): FileFilter {
  return function nestFileFilter (req, file, callback) {
    let answered = false
    const answer: FileFilterCallback = (error, acceptFile) => {
      if (answered) return
      answered = true
      callback(error, acceptFile)
    }
    const refuse = (error: unknown): void => answer(error || new Error('fileFilter failed: ' + String(error)), false)
    let result: unknown
    try {
      result = fileFilter(req, file, answer)
    } catch (err) {
      if (answered) throw err
      return refuse(err)
    }
    const then = (result as { then?: unknown } | null | undefined)?.then
    if (typeof then === 'function') {
      then.call(result, undefined, (err: unknown) => { if (!answered) refuse(err) })
    }
  }
}
