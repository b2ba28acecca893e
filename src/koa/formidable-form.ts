// koaBody()'s multipart reading: the one multipart stage, with formidable's hooks (onPart, filter, filename, onFileBegin)
// and its form-wide limits (maxTotalFileSize, maxFieldsSize) and hashes on the parts as the stage reports them.
import type { Hash } from 'crypto'
import path from 'path'
import { Readable } from 'stream'
import { loadCrypto } from '../dependencies'
import * as errors from '../errors'
import { createFieldAssembler } from '../multipart/fields'
import { NODE_FORMS } from '../parsers/node-forms'
import { checkBoundary, createFormCollector } from '../multipart/form-collector'
import type { FieldPartInfo, FilePartInfo, PartCollector } from '../multipart/part-collector'
import { asBuffer, NODE_BYTES } from '../multipart/node-bytes'
import { createMultipartStage } from '../multipart/part-reader'
import { createParserConfig, normalizeMultipartOptions, type MultipartSettings } from '../multipart/settings'
import { NEW_PRIVATE_FILE, randomFileName, storeOnDiskAt, type FileOpening, type FileStore, type StoreCallback, type StoredFile } from '../multipart/sinks'
import type { StreamParserDefinition } from '../parsers/definition'
import type { UploadedFile } from '../types'
import { extensionOf, FormidableLikeFile } from './formidable-files'
import type { FileFilter, FileNamer, OnFileBegin, OnPart } from './types'

/** formidable's hooks and form-wide limits, validated when koaBody() is created. */
export interface FormidableRules {
  /** `uploadDir`, resolved (formidable's files are joined to it, and must stay in it). */
  readonly uploadDir: string
  readonly keepExtensions: boolean
  readonly onPart: OnPart | null
  readonly filter: FileFilter | null
  readonly filename: FileNamer | null
  readonly onFileBegin: OnFileBegin | null
  /** A hash algorithm node:crypto knows, or false. */
  readonly hashAlgorithm: string | false
  /** All files' bytes together. */
  readonly maxTotalFileSize: number
  /** All fields' bytes together. */
  readonly maxFieldsSize: number
}

/** A part as formidable hands it to `onPart`, `filter` and `filename`: a stream of its bytes, with its names. */
export type FormidablePart = Readable & { name: string, originalFilename: string | null, mimetype: string | null }

/** formidable's name for a file whose `filename` hook has no client name to go on, or whose name leaves `uploadDir`. */
const INVALID_NAME = 'invalid-name'

/** A file's name as opened: a random one is new and private; a name the app chose is opened as formidable opens it. */
const CHOSEN_FILE: FileOpening = { flags: 'w' }

/** The file each stored upload is, as koaBody() lists it. */
const listedAs = new WeakMap<UploadedFile, FormidableLikeFile>()

/** The formidable file an upload of a koaBody() form was stored as. */
export function formidableFileOf (upload: UploadedFile): FormidableLikeFile {
  return listedAs.get(upload) as FormidableLikeFile
}

/** The multipart stage as koaBody() reads it: stored files are not tied to the response (presentFiles does that). */
export function createFormidableDefinition (rules: FormidableRules): StreamParserDefinition {
  return {
    name: 'multipart',
    defaultType: 'multipart/form-data',
    createStage (options, variant) {
      const settings = normalizeMultipartOptions(options)
      // Files go to disk under random names: crypto loads now, when koaBody() is created.
      loadCrypto()
      const assembleFields = createFieldAssembler(settings, variant, NODE_FORMS, NODE_BYTES.decode)
      const config = createParserConfig(settings)
      const stage = createMultipartStage({
        check: checkBoundary,
        begin (_req, _res, done) {
          const reading = new FormidableReading(rules, settings)
          reading.inner = createFormCollector(settings, assembleFields, undefined, done, reading.store)
          return { config, collector: reading }
        }
      })
      return { stage, defaultLimit: settings.defaultLimit }
    }
  }
}

/**
 * One form's reading: the hooks run on each part the stage reports before it goes on to the form collector (which
 * counts, keeps and removes as for multipart()), and files are stored where the hooks say.
 */
class FormidableReading implements PartCollector {
  inner!: PartCollector
  private fieldBytesSoFar = 0
  private fileBytesSoFar = 0
  /** onPart promises not yet settled: the form ends after them, so a late rejection is still its error. */
  private pendingHooks = 0
  private formEnded = false
  /** Callers of whenJudged waiting for the pending onPart promises. */
  private judgedWaits: Array<() => void> = []

  constructor (private readonly rules: FormidableRules, private readonly settings: MultipartSettings) {}

  get settled (): boolean {
    return this.inner.settled
  }

  field (name: string | undefined, value: string | Uint8Array | undefined, info: FieldPartInfo): void {
    if (this.inner.settled || value === undefined || this.rules.onPart === null) {
      this.handleField(name, value, info)
      return
    }
    const bytes = typeof value === 'string' ? Buffer.from(value) : asBuffer(value)
    const part = asPart(new Readable({ read () {} }), name, null, null)
    let handled = false
    this.callOnPart(part, () => {
      if (handled) return
      handled = true
      this.handleField(name, value, info)
    })
    // The part's bytes follow onPart, as formidable's do, for listeners it added.
    part.push(bytes)
    part.push(null)
  }

  file (name: string | undefined, stream: Readable, info: FilePartInfo): void {
    // Every stream gets its error listener before it can emit (multer CVE-2025-7338).
    stream.on('error', noop)
    if (this.inner.settled || this.rules.onPart === null) {
      this.handleFile(name, stream, info)
      return
    }
    const part = asPart(stream, name, info.filename ?? null, info.mimeType)
    let handled = false
    this.callOnPart(part, () => {
      if (handled) return
      handled = true
      this.handleFile(name, stream, info)
    })
    // A part onPart neither handed back nor reads is read off, or the form would wait for it for good.
    if (!handled && stream.listenerCount('data') === 0 && stream.listenerCount('readable') === 0) stream.resume()
  }

  countLimit (limit: Parameters<PartCollector['countLimit']>[0]): void {
    this.inner.countLimit(limit)
  }

  unreadableFileName (name: string | undefined): void {
    this.inner.unreadableFileName(name)
  }

  parserError (err: Error, empty: boolean): void {
    this.inner.parserError(err, empty)
  }

  fault (thrown: unknown): void {
    this.inner.fault(thrown)
  }

  end (): void {
    this.formEnded = true
    if (this.pendingHooks === 0) this.inner.end()
  }

  abort (callback: (own?: Error) => void): void {
    this.inner.abort(callback)
  }

  whenJudged (callback: () => void): void {
    if (this.pendingHooks === 0) this.inner.whenJudged(callback)
    else this.judgedWaits.push(callback)
  }

  /** onPart with the part and its handler (formidable's `_handlePart`); a throw or a rejection is the form's error. */
  private callOnPart (part: FormidablePart, handle: () => void): void {
    try {
      // formidable's `_handlePart(part)`: the part koaBody() reads is this one, whatever the app hands back.
      const returned = (this.rules.onPart as OnPart)(part, () => { handle() })
      if (isThenable(returned)) {
        this.pendingHooks++
        returned.then(() => {
          if (--this.pendingHooks > 0) return
          if (this.formEnded) this.inner.end()
          for (const judged of this.judgedWaits.splice(0)) this.inner.whenJudged(judged)
        }, (rejected: unknown) => {
          this.inner.fault(rejected)
          for (const judged of this.judgedWaits.splice(0)) this.inner.whenJudged(judged)
        })
      }
    } catch (thrown) {
      this.inner.fault(thrown)
    }
  }

  private handleField (name: string | undefined, value: string | Uint8Array | undefined, info: FieldPartInfo): void {
    if (!this.inner.settled && value !== undefined) {
      this.fieldBytesSoFar += typeof value === 'string' ? Buffer.byteLength(value) : value.length
      if (this.fieldBytesSoFar > this.rules.maxFieldsSize) {
        this.inner.fault(errors.fieldsTooLarge(this.rules.maxFieldsSize))
        return
      }
    }
    this.inner.field(name, value, info)
  }

  /** A file part goes to the collector (which counts it and calls the store) unless `filter` says no. */
  private handleFile (name: string | undefined, stream: Readable, info: FilePartInfo): void {
    const { filter } = this.rules
    if (!this.inner.settled && filter !== null) {
      let kept: unknown
      try {
        kept = filter(asPart(stream, name, info.filename ?? null, info.mimeType))
      } catch (thrown) {
        stream.resume()
        this.inner.fault(thrown)
        return
      }
      if (!kept) {
        stream.resume()
        return
      }
    }
    this.inner.file(name, stream, info)
  }

  /** Stores an accepted file where `filename` and `onFileBegin` say, before its first byte is written. */
  readonly store: FileStore = (stream, info, done, refuse) => {
    const { rules } = this
    const part = asPart(stream, info.fieldName, info.originalName, info.mimeType)
    let newFilename: string
    let chosen = rules.filename !== null
    try {
      newFilename = rules.filename !== null ? nameWith(rules, rules.filename, part) : randomName(rules, info.originalName)
    } catch (thrown) {
      return refused(stream, refuse, thrown)
    }
    const file = new FormidableLikeFile(0, inUploadDir(rules.uploadDir, newFilename), newFilename, info.originalName, info.mimeType, null, rules.hashAlgorithm)
    const intended = file.filepath
    let begun: unknown
    try {
      begun = rules.onFileBegin === null ? undefined : rules.onFileBegin(info.fieldName, file)
    } catch (thrown) {
      return refused(stream, refuse, thrown)
    }
    let storing: StoredFile | null = null
    let removed = false
    const open = (): void => {
      if (removed) return
      if (typeof file.filepath !== 'string' || file.filepath === '') file.filepath = intended
      else if (file.filepath !== intended) chosen = true
      const hash = rules.hashAlgorithm === false ? null : loadCrypto().createHash(rules.hashAlgorithm)
      this.countFileBytes(stream, hash, refuse)
      storing = storeOnDiskAt(file.filepath, chosen ? CHOSEN_FILE : NEW_PRIVATE_FILE, stream, info, listed(file, hash, done))
    }
    // An async onFileBegin is waited for before the file is opened (formidable opens it at once, so it could only
    // change the path synchronously); its rejection is the form's error.
    if (isThenable(begun)) begun.then(open, (rejected: unknown) => { refused(stream, refuse, rejected) })
    else open()
    return {
      remove (callback) {
        removed = true
        if (storing !== null) storing.remove(callback)
        else {
          stream.resume()
          process.nextTick(callback)
        }
      }
    }
  }

  /** Hashes a file's bytes and counts them against `maxTotalFileSize` (a file over its own limit gets that error). */
  private countFileBytes (stream: Readable, hash: Hash | null, refuse: (answer: unknown) => void): void {
    const fileSizeLimit = this.settings.files?.fileSizeLimit ?? Infinity
    let size = 0
    stream.on('data', (chunk: Buffer) => {
      hash?.update(chunk)
      size += chunk.length
      this.fileBytesSoFar += chunk.length
      if (size <= fileSizeLimit && this.fileBytesSoFar > this.rules.maxTotalFileSize) refuse(errors.filesTooLarge(this.rules.maxTotalFileSize))
    })
  }
}

/** The stream as formidable's part: its field name, the client's file name and the part's type. */
function asPart (stream: Readable, name: string | undefined, originalFilename: string | null, mimetype: string | null): FormidablePart {
  return Object.assign(stream, { name: name ?? '', originalFilename, mimetype })
}

/** formidable's call of `filename(name, ext, part, form)`: the client's name parsed, the extension only with keepExtensions. */
function nameWith (rules: FormidableRules, filename: FileNamer, part: FormidablePart): string {
  let name = INVALID_NAME
  let ext = ''
  if (part.originalFilename) {
    ({ name, ext } = path.parse(part.originalFilename))
    if (!rules.keepExtensions) ext = ''
  }
  const chosen: unknown = filename(name, ext, part, undefined)
  if (typeof chosen !== 'string') throw new TypeError('formidable.filename must return a string, not ' + typeof chosen)
  return chosen
}

/** bodykit's name for a file (32 random hex characters), with formidable's extension of the client's name for keepExtensions. */
function randomName (rules: FormidableRules, originalName: string): string {
  return rules.keepExtensions ? randomFileName() + extensionOf(originalName) : randomFileName()
}

/**
 * formidable's path of a name: joined to `uploadDir`, or `invalid-name` there when the name could leave it, which is
 * a name with a `..` segment. formidable checks that the joined path starts with `uploadDir`, which lets a name such as
 * `../uploads-x/f` reach a sibling folder whose name begins with uploadDir's; without a `..` segment no name leaves it.
 */
function inUploadDir (uploadDir: string, name: string): string {
  return path.join(uploadDir, name.split(/[\\/]/).includes('..') ? INVALID_NAME : name)
}

/** A hook's throw: the part is read off and the form refused with what was thrown; nothing was stored. */
function refused (stream: Readable, refuse: (answer: unknown) => void, thrown: unknown): StoredFile {
  stream.resume()
  refuse(errors.thrownByUser(thrown))
  return { remove (callback) { process.nextTick(callback) } }
}

/** The store's callback, which fills in the formidable file once the upload is on disk. */
function listed (file: FormidableLikeFile, hash: Hash | null, done: StoreCallback): StoreCallback {
  return (err, upload) => {
    if (err === null && upload !== undefined) {
      file.size = upload.size
      file.lastModifiedDate = upload.size > 0 ? new Date() : null
      file.hash = hash === null ? null : hash.digest('hex')
      listedAs.set(upload, file)
    }
    done(err, upload)
  }
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

function noop (): void {}

