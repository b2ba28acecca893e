// koaBody()'s files: formidable's file fields on each stored upload, keyed by field name as koa-body keys them, and kept
// after a successful response, as koa-body leaves them, or removed.
import fs from 'fs'
import path from 'path'
import type { ServerResponse } from 'http'
import onFinished from 'on-finished'
import type { UploadedFile } from '../types'
import type { KoaBodyFile, KoaBodyFiles } from './types'

/** A file as formidable's PersistentFile shows it (the fields, and `toJSON` giving the same as formidable's). */
export class FormidableLikeFile implements KoaBodyFile {
  size: number
  filepath: string
  newFilename: string
  originalFilename: string | null
  mimetype: string | null
  lastModifiedDate: Date | null
  hashAlgorithm: string | false
  hash: string | null = null
  constructor (size: number, filepath: string, newFilename: string, originalFilename: string, mimetype: string, lastModifiedDate: Date | null, hashAlgorithm: string | false) {
    this.size = size
    this.filepath = filepath
    this.newFilename = newFilename
    this.originalFilename = originalFilename
    this.mimetype = mimetype
    this.lastModifiedDate = lastModifiedDate
    this.hashAlgorithm = hashAlgorithm
  }

  toJSON (): ReturnType<KoaBodyFile['toJSON']> {
    const json: ReturnType<KoaBodyFile['toJSON']> = { size: this.size, filepath: this.filepath, newFilename: this.newFilename, mimetype: this.mimetype, mtime: this.lastModifiedDate, originalFilename: this.originalFilename }
    if (this.hash !== null && this.hash !== '') json.hash = this.hash
    return json
  }
}

/** formidable's extension of a client's file name: from the first dot of its base name, cut at the first character not in [a-z0-9.]. */
export function extensionOf (originalName: string): string {
  const base = path.basename(originalName)
  const dot = base.indexOf('.')
  if (dot === -1) return ''
  let end = dot + 1
  while (end < base.length && isExtensionChar(base.charCodeAt(end))) end++
  return end === dot + 1 ? '' : base.slice(dot, end)
}

function isExtensionChar (code: number): boolean {
  // formidable's filter: ASCII letters, digits and dots (its own test, without a regex).
  return code === 46 || (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
}

/** Removes files, ignoring those already gone (moved by the app). */
function removeFiles (paths: readonly string[]): void {
  for (const file of paths) fs.unlink(file, () => {})
}

/**
 * The stored files as koa-body lists them: by field name, one file or an array of them, in form order. They are the
 * app's after a successful response, as koa-body leaves them; when the request fails (the response is an error, or
 * the connection closed before it was sent) they are removed once the response has finished, and with
 * `removeAfterResponse` after any response. A file the app moved away is not followed.
 */
export function presentFiles (stored: readonly UploadedFile[], listed: (upload: UploadedFile) => KoaBodyFile, removeAfterResponse: boolean, res: ServerResponse): KoaBodyFiles {
  const files: KoaBodyFiles = Object.create(null)
  const paths: string[] = []
  for (const upload of stored) {
    const file = listed(upload)
    paths.push(file.filepath)
    const previous = files[upload.fieldName]
    files[upload.fieldName] = previous === undefined ? file : Array.isArray(previous) ? [...previous, file] : [previous, file]
  }
  if (paths.length > 0) {
    onFinished(res, (err) => {
      if (removeAfterResponse || Boolean(err) || !res.writableFinished || res.statusCode >= 400) removeFiles(paths)
    })
  }
  return files
}
