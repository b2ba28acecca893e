// The Jazzer.js fuzz targets by name (each file is also a target of its own: `export function fuzz(data)`).
import type { Answers, Source } from './harness'
import * as contentType from './content-type'
import * as h3 from './h3'
import * as inflate from './inflate'
import * as json from './json'
import * as koa from './koa'
import * as multer from './multer'
import * as multipart from './multipart'
import * as text from './text'
import * as urlencoded from './urlencoded'
import * as web from './web'
import * as webBuild from './web-build'
import * as webMultipart from './web-multipart'

export interface FuzzTarget {
  /** Runs one input; throws a finding. */
  fuzz (data: Buffer): Promise<void>
  /** Reads the request an input describes (also used to write seeds). */
  draw (source: Source): unknown
  /** Hand-written inputs, by file name, as the answers the draw takes. */
  seeds: Record<string, Answers>
}

export const TARGETS: Record<string, FuzzTarget> = {
  'content-type': contentType,
  json,
  urlencoded,
  text,
  inflate,
  multipart,
  multer,
  web,
  koa,
  'web-multipart': webMultipart,
  'web-build': webBuild,
  h3
}
