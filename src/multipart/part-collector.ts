// What the Node builds' multipart stage reports a form's parts to: one collector per request, made by the policy.
import type { Readable } from 'stream'
import type { CountLimit, FieldPartInfo, FilePartInfo } from './form-reading'

export type { CountLimit, FieldPartInfo, FilePartInfo } from './form-reading'

/** What busboy says of a field read whole, and of one cut at its size limit. */
export const WHOLE_FIELD: FieldPartInfo = { nameTruncated: false, valueTruncated: false }
export const TRUNCATED_FIELD: FieldPartInfo = { nameTruncated: false, valueTruncated: true }

/** What the multipart stage reports parts to: one per request, made by the policy. */
export interface PartCollector {
  /**
   * A field: its value decoded with the charset its part declares (undefined when busboy cannot decode it), or,
   * under the config's `undeclaredAsBytes`, the bytes of a value whose part declares none.
   */
  field (name: string | undefined, value: string | Uint8Array | undefined, info: FieldPartInfo): void
  file (name: string | undefined, stream: Readable, info: FilePartInfo): void
  countLimit (limit: CountLimit): void
  /**
   * A part whose `filename*` cannot be read and which has no plain `filename` to fall back on (RFC 6266 §4.3):
   * its `name` (undefined when it has none). The reader skips the part; the form is refused.
   */
  unreadableFileName (name: string | undefined): void
  /** busboy's error for a malformed body; `empty` when no byte of the body arrived. */
  parserError (err: Error, empty: boolean): void
  /**
   * A throw while the form was read, from what its parts were reported to (a fileFilter, a storage engine, a file
   * stream's listener): the read stops, and the value is reported as thrown, once every stored file is removed.
   */
  fault (thrown: unknown): void
  /** The form ended (its closing delimiter was read and the body ended). */
  end (): void
  readonly settled: boolean
  /**
   * Calls back (never synchronously) once every part reported so far is judged: no decision on it is still pending in
   * user code (multer's async fileFilter, koaBody's onPart). Before it answers 413 for the bytes past `limit`, the
   * pipeline gives the stage the bytes up to it and waits on this, so that an error met earlier in the body is the answer.
   */
  whenJudged (callback: () => void): void
  /** Stops: no outcome is reported any more; removes every stored file, then calls back. */
  abort (callback: (own?: Error) => void): void
}
