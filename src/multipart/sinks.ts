// Where accepted files go: memory (a Buffer) or disk (written as they arrive); each stored file knows how to remove itself.
import fs from 'fs'
import os from 'os'
import path from 'path'
import type { Readable } from 'stream'
import { loadCrypto } from '../dependencies'
import type { UploadedFile } from '../types'

/** What the part reader knows of a file when it starts. */
export interface FileInfo {
  readonly fieldName: string
  readonly originalName: string
  readonly mimeType: string
  readonly encoding: string
}

/** One file being stored, then stored. */
export interface StoredFile {
  /** Stops storing it and removes what was stored (closing the descriptor first); calls back once done, never with an error. */
  remove (callback: () => void): void
}

/** Called once: the file as `req.files` lists it, or the storage's error. */
export type StoreCallback = (err: Error | null, file?: UploadedFile) => void

/** Keeps the file's bytes in memory; bounded by the file size limit the part reader enforces. */
export function storeInMemory (stream: Readable, info: FileInfo, done: StoreCallback): StoredFile {
  let chunks: Buffer[] = []
  let size = 0
  stream.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    size += chunk.length
  })
  stream.on('end', () => {
    // Written out, not spread: an object spread costs microseconds per file here (V8 11, Node 20).
    done(null, { fieldName: info.fieldName, originalName: info.originalName, mimeType: info.mimeType, encoding: info.encoding, size, buffer: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) })
    chunks = []
  })
  return {
    remove (callback) {
      chunks = []
      stream.removeAllListeners('data')
      stream.removeAllListeners('end')
      process.nextTick(callback)
    }
  }
}

/**
 * How many bytes of a file may wait for the disk before the upload is paused. With a write stream's default
 * 16 KiB, every 64 KiB chunk paused the socket until the thread pool had written it, and a 64 MiB upload spent
 * about a third of its time in those round trips; with 1 MiB the socket goes on being read while earlier chunks
 * are written, several at once (writev). The bound is per file being written, whatever the file's size; the
 * kernel's receive buffer already holds as much of a fast sender's body per connection. docs/performance.md has
 * the figures.
 */
export const DISK_WRITE_BUFFER = 1024 * 1024

/**
 * Writes the file to `directory` (the system's temporary folder when undefined) as it arrives, under a random name (128 bits from the CSPRNG: never derived
 * from the client's name, so no path, extension or guessable name comes from the request).
 */
export function storeOnDisk (directory: string | undefined, stream: Readable, info: FileInfo, done: StoreCallback): StoredFile {
  // No folder given: the system's temporary folder (os.tmpdir(), as multer's default).
  if (directory === undefined) directory = os.tmpdir()
  // 'wx': never opens a file that already exists; 0o600: only the server's user reads uploads.
  return storeOnDiskAt(path.join(directory, randomFileName()), NEW_PRIVATE_FILE, stream, info, done)
}

/** A stored file's name: 32 hex characters, 128 bits from the CSPRNG. */
export function randomFileName (): string {
  return loadCrypto().randomBytes(16).toString('hex')
}

/** How a file is opened: its flags and mode, as `fs.createWriteStream` takes them. */
export interface FileOpening {
  readonly flags: string
  readonly mode?: number | undefined
}

/** A new file only the server's user reads: never one that already exists. */
export const NEW_PRIVATE_FILE: FileOpening = { flags: 'wx', mode: 0o600 }

/**
 * Writes the file at `filePath` as it arrives (koaBody() chooses the path with formidable's hooks); `fileName` in what
 * `done` gets is the path's base name.
 */
export function storeOnDiskAt (filePath: string, opening: FileOpening, stream: Readable, info: FileInfo, done: StoreCallback): StoredFile {
  const writer = fs.createWriteStream(filePath, { flags: opening.flags, mode: opening.mode, highWaterMark: DISK_WRITE_BUFFER })
  let removing = false
  let closed = false
  const whenClosed: Array<() => void> = []
  writer.on('error', (err) => {
    if (!removing) done(err)
  })
  writer.on('close', () => {
    closed = true
    for (const callback of whenClosed.splice(0)) callback()
  })
  writer.on('finish', () => {
    // 'close' follows: the descriptor is released before the file is handed on.
    writer.once('close', () => {
      if (!removing) done(null, { fieldName: info.fieldName, originalName: info.originalName, mimeType: info.mimeType, encoding: info.encoding, size: writer.bytesWritten, fileName: path.basename(filePath), path: filePath })
    })
  })
  stream.pipe(writer)
  return {
    remove (callback) {
      removing = true
      stream.unpipe(writer)
      // Security (multer CVE-2026-77037): unlinking an open file keeps its blocks; close the descriptor, then unlink.
      const unlink = (): void => { fs.unlink(filePath, () => { callback() }) }
      if (closed) unlink()
      else {
        whenClosed.push(unlink)
        writer.destroy()
      }
    }
  }
}

/**
 * Stores an accepted file where its caller chooses, in place of memory or disk storage (koaBody()'s formidable hooks);
 * `refuse` ends the form with an answer of the store's own (a limit's error, what a hook threw).
 */
export type FileStore = (stream: Readable, info: FileInfo, done: StoreCallback, refuse: (answer: unknown) => void) => StoredFile

/** Removes stored files one after another (iteratively: 20,000 files cannot overflow the stack), then calls back. */
export function removeAll (files: StoredFile[], callback: () => void): void {
  let pending = files.length
  if (pending === 0) {
    process.nextTick(callback)
    return
  }
  const onRemoved = (): void => {
    if (--pending === 0) callback()
  }
  for (const file of files) file.remove(onRemoved)
}
