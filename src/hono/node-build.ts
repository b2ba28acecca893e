// bodykit/hono's middlewares over the Node build's readers: a Request read by the one pipeline, disk files removed after the handler.
import fs from 'fs'
import type { AnyOptions } from '../options'
import { createReadSettings } from '../read-settings'
import { loadDefinition } from '../parsers/catalog'
import { readJson, readMultipart, readRaw, readText, readUrlencoded } from '../readers'
import type { UploadedFile } from '../types'
import { modern } from '../variants'
import type { HonoBuild } from './adapter'

/** @internal */
export const nodeBuild: HonoBuild = {
  readers: { json: readJson, raw: readRaw, text: readText, urlencoded: readUrlencoded, multipart: readMultipart } as HonoBuild['readers'],
  checkOptions: (kind, options: AnyOptions) => { createReadSettings(loadDefinition(kind), options, modern) },
  releaseFiles: (files) => { removeDiskFiles(files as readonly UploadedFile[]) }
}

/** Unlinks the disk files of a form; one that was moved or removed already is no error. */
function removeDiskFiles (files: readonly UploadedFile[]): void {
  for (const file of files) {
    if (typeof file.path === 'string') fs.unlink(file.path, ignore)
  }
}

function ignore (): void {}
