// multer's two storage engines with its contract (`_handleFile`, `_removeFile`): memory, and disk, where a file
// being written is closed before it is unlinked.
import fs from 'fs'
import os from 'os'
import path from 'path'
import { pipeline, type Readable } from 'stream'
import { loadCrypto } from '../dependencies'
import { DISK_WRITE_BUFFER } from '../multipart/sinks'
import { thrownByUser } from '../errors'
import { MulterError } from './multer-error'

/** A file as multer hands it to fileFilter and to a storage engine (and lists it, once stored). */
export interface MulterFile {
  fieldname: string
  originalname: string
  encoding: string
  mimetype: string
  size?: number
  /** Only while the engine's `_handleFile` runs (not enumerable). */
  stream?: Readable
  destination?: string
  filename?: string
  path?: string
  buffer?: Buffer
  [key: string]: unknown
}

/** The request as engines and filters see it. */
type Request = object

/** What a storage engine does: store a file (calling back with what to add to it), and remove one. */
export interface StorageEngine {
  _handleFile (req: Request, file: MulterFile, callback: (error?: unknown, info?: Partial<MulterFile>) => void): void
  _removeFile (req: Request, file: MulterFile, callback: (error: Error | null) => void): void
}

type PathCallback = (error: Error | null, value: string) => void
/** Where a disk file goes, or what it is called: multer's callback style. */
type PathChooser = (req: Request, file: MulterFile, callback: PathCallback) => void

/** Options of {@link diskStorage}. */
export interface DiskStorageOptions {
  /** The folder (created at once when a string) or a function choosing it per file. @default os.tmpdir() */
  destination?: string | PathChooser
  /** The file's name in its folder. @default 32 random hex characters (128 bits from the CSPRNG) */
  filename?: PathChooser
  /** fsync each file before it is handed on. @default false */
  flush?: boolean
}

/** The default name: never derived from the client's, so no path or extension comes from the request. */
function randomName (_req: Request, _file: MulterFile, callback: PathCallback): void {
  loadCrypto().randomBytes(16, (err, bytes) => { callback(err, err ? undefined as unknown as string : bytes.toString('hex')) })
}

/** Files _handleFile is removing because they could not be written whole, and the removals waiting for it. */
const discarding = new WeakMap<MulterFile, Array<() => void>>()

/** A file being written, so that `_removeFile` closes its descriptor first. */
const writers = new WeakMap<MulterFile, fs.WriteStream>()

class DiskStorage implements StorageEngine {
  private readonly chooseDestination: PathChooser
  private readonly chooseName: PathChooser
  private readonly flush: boolean

  constructor (options: DiskStorageOptions | undefined) {
    const given = options ?? {}
    if (given.filename === undefined) {
      // The random names' crypto loads now, when the storage is made, never while a file is stored.
      loadCrypto()
    }
    this.chooseName = given.filename ?? randomName
    this.flush = given.flush === true
    const destination = given.destination
    if (typeof destination === 'string') {
      fs.mkdirSync(destination, { recursive: true })
      this.chooseDestination = (_req, _file, callback) => { callback(null, destination) }
    } else {
      this.chooseDestination = destination ?? ((_req, _file, callback) => { callback(null, os.tmpdir()) })
    }
  }

  _handleFile (req: Request, file: MulterFile, callback: (error?: unknown, info?: Partial<MulterFile>) => void): void {
    callUser(this.chooseDestination, req, file, callback, (err, destination) => {
      if (err) return callback(err)
      callUser(this.chooseName, req, file, callback, (nameErr, filename) => {
        if (nameErr) return callback(nameErr)
        const stream = file.stream as Readable
        // The upload may have ended while the callbacks ran (an abort): no file is opened for it.
        if (stream.destroyed) return callback(new MulterError('STREAM_DESTROYED'))
        const finalPath = path.join(destination, filename)
        // multer's own write stream has the default buffer: a larger one changes no file, only the speed (sinks.ts says why).
        const writer = fs.createWriteStream(finalPath, { highWaterMark: DISK_WRITE_BUFFER })
        // Set before a byte is written, so a removal can always find it.
        file.path = finalPath
        writers.set(file, writer)
        writer.once('close', () => { writers.delete(file) })
        // Deliberate difference from multer, which leaves it: a file that could not be written whole is removed
        // (its descriptor closed first) before the error is reported.
        const fail = (err: Error): void => {
          discarding.set(file, [])
          const unlink = (): void => {
            fs.unlink(finalPath, () => {
              const waiting = discarding.get(file) ?? []
              discarding.delete(file)
              delete file.path
              for (const removed of waiting) removed()
              callback(err)
            })
          }
          if (writer.closed) unlink()
          else writer.once('close', unlink)
        }
        pipeline(stream, writer, (pipeErr) => {
          if (pipeErr) return fail(pipeErr)
          const info = { destination, filename, path: finalPath, size: writer.bytesWritten }
          if (!this.flush) return callback(null, info)
          syncFile(file, finalPath, (syncErr) => {
            if (syncErr) fail(syncErr)
            else callback(null, info)
          })
        })
      })
    })
  }

  _removeFile (_req: Request, file: MulterFile, callback: (error: Error | null) => void): void {
    const filePath = file.path
    // A file that could not be written whole is removed by _handleFile itself: done once that is.
    const failing = discarding.get(file)
    if (failing !== undefined) {
      failing.push(() => { callback(null) })
      return
    }
    if (filePath === undefined) return callback(null)
    delete file.destination
    delete file.filename
    delete file.path
    const unlink = (): void => { whenSynced(file, () => { fs.unlink(filePath, callback) }) }
    const writer = writers.get(file)
    if (writer === undefined || writer.closed) return unlink()
    // Security (multer CVE-2026-77037): unlinking an open file keeps its blocks; close the descriptor, then unlink.
    writer.once('close', unlink)
    writer.destroy()
  }
}

/**
 * Calls a user's destination or filename function: a throw, even from a call made later (within the other's
 * callback), is the file's storage error, not an exception out of the upload.
 */
function callUser (choose: PathChooser, req: Request, file: MulterFile, fail: (error: unknown) => void, then: PathCallback): void {
  let answered = false
  try {
    choose(req, file, (err, value) => {
      if (answered) return
      answered = true
      then(err, value)
    })
  } catch (thrown) {
    if (answered) throw thrown
    answered = true
    fail(thrownByUser(thrown))
  }
}

/** Files being fsynced through a second descriptor, and who waits for it to close. */
const syncing = new WeakMap<MulterFile, Array<() => void>>()

function syncFile (file: MulterFile, filePath: string, callback: (err: Error | null) => void): void {
  syncing.set(file, [])
  const finish = (err: Error | null): void => {
    const waiting = syncing.get(file) ?? []
    syncing.delete(file)
    for (const next of waiting) next()
    callback(err)
  }
  fs.open(filePath, 'r+', (openErr, fd) => {
    if (openErr) return finish(openErr)
    fs.fsync(fd, (syncErr) => { fs.close(fd, (closeErr) => { finish(syncErr ?? closeErr) }) })
  })
}

function whenSynced (file: MulterFile, callback: () => void): void {
  const waiting = syncing.get(file)
  if (waiting === undefined) callback()
  else waiting.push(callback)
}

class MemoryStorage implements StorageEngine {
  _handleFile (_req: Request, file: MulterFile, callback: (error?: unknown, info?: Partial<MulterFile>) => void): void {
    const chunks: Buffer[] = []
    const stream = file.stream as Readable
    stream.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    stream.on('end', () => {
      const buffer = Buffer.concat(chunks)
      callback(null, { buffer, size: buffer.length })
    })
  }

  _removeFile (_req: Request, file: MulterFile, callback: (error: Error | null) => void): void {
    delete file.buffer
    callback(null)
  }
}

/** Files written to disk as they arrive: `destination`, `filename` and `path` are set on each. */
export function diskStorage (options?: DiskStorageOptions): StorageEngine {
  return new DiskStorage(options)
}

/** Files kept in memory as a Buffer (`buffer`): set `limits.fileSize` to bound it. */
export function memoryStorage (_options?: unknown): StorageEngine {
  return new MemoryStorage()
}
