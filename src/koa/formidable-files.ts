// koaBody()'s files: the multipart stage's disk files shown with formidable's fields, keyed by field name as koa-body
// keys them, renamed for `keepExtensions`, moved where `onFileBegin` says, and removed as bodykit removes uploads.
import fs from 'fs'
import path from 'path'
import type { ServerResponse } from 'http'
import { loadOnFinished } from '../dependencies'
import { storageFailed, thrownByUser } from '../errors'
import type { UploadedFile } from '../types'
import { handled } from './middleware'
import type { KoaBodyFile, KoaBodyFiles, OnFileBegin } from './types'

/** What koaBody() does with the files of a form, fixed when the middleware is created. */
export interface FileRules {
  readonly keepExtensions: boolean
  readonly onFileBegin: OnFileBegin | null
}

/** A file as formidable's PersistentFile shows it (the fields, and `toJSON` giving the same as formidable's). */
class FormidableLikeFile implements KoaBodyFile {
  size: number
  filepath: string
  newFilename: string
  originalFilename: string | null
  mimetype: string | null
  lastModifiedDate: Date | null
  hashAlgorithm = false as const
  hash = null
  constructor (size: number, filepath: string, newFilename: string, originalFilename: string, mimetype: string, lastModifiedDate: Date | null) {
    this.size = size
    this.filepath = filepath
    this.newFilename = newFilename
    this.originalFilename = originalFilename
    this.mimetype = mimetype
    this.lastModifiedDate = lastModifiedDate
  }

  toJSON (): ReturnType<KoaBodyFile['toJSON']> {
    return { size: this.size, filepath: this.filepath, newFilename: this.newFilename, mimetype: this.mimetype, mtime: this.lastModifiedDate, originalFilename: this.originalFilename }
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

/** Moves a file; across file systems (EXDEV), copies then removes it. A failure is 500 `multipart.storage.failed`. */
async function move (from: string, to: string): Promise<void> {
  try {
    await fs.promises.rename(from, to)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw storageFailed(err)
    try {
      await fs.promises.copyFile(from, to, fs.constants.COPYFILE_EXCL)
      await fs.promises.unlink(from)
    } catch (copyErr) {
      throw storageFailed(copyErr)
    }
  }
}

/** Removes files, ignoring those already gone (moved by the app). */
function removeFiles (paths: readonly string[]): Promise<void> {
  return Promise.all(paths.map((file) => fs.promises.unlink(file).catch(() => {}))).then(() => {})
}

/**
 * The stage's stored files as koa-body lists them. Each is renamed for `keepExtensions` and passed to `onFileBegin`,
 * in form order; a `filepath` it changed is where the file is moved, and that file is the app's from then on. The
 * files left in `uploadDir` are removed once the response has finished (the stage leaves them to this). When a step
 * fails (a throw from `onFileBegin`, a move), every file of the form is removed and the error is thrown.
 */
export async function presentFiles (stored: readonly UploadedFile[], rules: FileRules, res: ServerResponse): Promise<KoaBodyFiles> {
  const files: KoaBodyFiles = Object.create(null)
  const inUploadDir: string[] = []
  const moved: string[] = []
  const pending = stored.map((file) => file.path as string)
  try {
    for (const upload of stored) {
      const storedPath = upload.path as string
      let newFilename = upload.fileName as string
      if (rules.keepExtensions) newFilename += extensionOf(upload.originalName)
      const file = new FormidableLikeFile(upload.size, path.join(path.dirname(storedPath), newFilename), newFilename, upload.originalName, upload.mimeType, upload.size > 0 ? new Date() : null)
      if (newFilename !== upload.fileName) await move(storedPath, file.filepath)
      pending[pending.indexOf(storedPath)] = file.filepath
      if (rules.onFileBegin !== null) {
        const intended = file.filepath
        try {
          // An async onFileBegin is waited for (formidable ignores what it returns): its rejection is the request's error.
          await handled(rules.onFileBegin(upload.fieldName, file))
        } catch (thrown) {
          throw thrownByUser(thrown)
        }
        if (typeof file.filepath !== 'string' || file.filepath === '') file.filepath = intended
        if (file.filepath !== intended) {
          await move(intended, file.filepath)
          moved.push(file.filepath)
          pending[pending.indexOf(intended)] = file.filepath
        }
      }
      if (!moved.includes(file.filepath)) inUploadDir.push(file.filepath)
      const previous = files[upload.fieldName]
      files[upload.fieldName] = previous === undefined ? file : Array.isArray(previous) ? [...previous, file] : [previous, file]
    }
  } catch (err) {
    await removeFiles(pending)
    throw err
  }
  // Every file left in uploadDir, renamed or not, is removed once the response has finished (also when it finished
  // before the form was read: then now); the stage does not tie them to it (koaMultipartDefinition).
  if (inUploadDir.length > 0) loadOnFinished()(res, () => { void removeFiles(inUploadDir) })
  return files
}
