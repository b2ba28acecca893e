// multipart()'s own options, validated once: the limits every part is counted against and where files go.
import bytes from 'bytes'
import type { AnyOptions } from '../options'
import type { ReadingConfig } from './form-reading'

/** Where accepted files are kept. */
export interface FileSettings {
  readonly storage: 'memory' | 'disk'
  /** Where disk files go; undefined: the system's temporary folder, which the disk sink asks the OS for (no `os` here: the Web build shares this module). */
  readonly directory: string | undefined
  readonly fileSizeLimit: number
  readonly fileLimit: number
  /** The fields that may carry files, or null for any. */
  readonly fieldNames: ReadonlySet<string> | null
}

/** multipart()'s request-independent settings. */
export interface MultipartSettings {
  readonly extended: boolean
  readonly parameterLimit: number
  readonly depth: number
  readonly defaultCharset: string
  readonly partLimit: number
  readonly fieldSizeLimit: number
  readonly fieldNameSizeLimit: number
  /** null: files are refused. */
  readonly files: FileSettings | null
  /** The whole body's limit when the `limit` option is not given. */
  readonly defaultLimit: number
}

const DEFAULT_FILE_SIZE = 10 * 1024 * 1024
const DEFAULT_FILE_COUNT = 10
/** Room for the fields besides the files in the derived default `limit`. */
const FIELDS_ROOM = 1024 * 1024
const DEFAULT_LIMIT_WITHOUT_FILES = 102400

/** Validates multipart()'s options; a bad value throws a TypeError naming it, as the other parsers' options do. */
export function normalizeMultipartOptions (options: AnyOptions): MultipartSettings {
  const given = options ?? {}
  // The body is read as a stream and never held whole, so there is no buffer for these to see.
  if (given.verify !== undefined && given.verify !== false) throw new TypeError('option verify is not supported by multipart()')
  if (given.rawBody !== undefined && given.rawBody !== false) throw new TypeError('option rawBody is not supported by multipart()')
  if (given.extended !== undefined && typeof given.extended !== 'boolean') throw new TypeError('option extended must be a boolean')
  const defaultCharset = given.defaultCharset === undefined ? 'utf-8' : given.defaultCharset
  if (typeof defaultCharset !== 'string' || !isDecodable(defaultCharset)) {
    throw new TypeError('option defaultCharset must be a charset TextDecoder knows')
  }
  const files = normalizeFiles(given.files)
  return {
    extended: given.extended === true,
    parameterLimit: readCount(given, 'parameterLimit', 1000),
    depth: readCount(given, 'depth', 32, 0),
    defaultCharset: defaultCharset.toLowerCase(),
    partLimit: readCount(given, 'partLimit', 1000),
    fieldSizeLimit: readSize(given, 'fieldSizeLimit', 1024 * 1024),
    fieldNameSizeLimit: readSize(given, 'fieldNameSizeLimit', 256),
    files,
    defaultLimit: files === null ? DEFAULT_LIMIT_WITHOUT_FILES : files.fileLimit * files.fileSizeLimit + FIELDS_ROOM
  }
}

function normalizeFiles (files: unknown): FileSettings | null {
  if (files === undefined || files === false) return null
  if (files !== true && (files === null || typeof files !== 'object')) throw new TypeError('option files must be a boolean or an object')
  const given = (files === true ? {} : files) as Record<string, unknown>
  const storage = given.storage === undefined ? 'memory' : given.storage
  if (storage !== 'memory' && storage !== 'disk') throw new TypeError('option files.storage must be "memory" or "disk"')
  const directory = given.directory
  if (directory !== undefined && (typeof directory !== 'string' || directory === '')) throw new TypeError('option files.directory must be a folder path')
  const fieldNames = given.fieldNames
  if (fieldNames !== undefined && (!Array.isArray(fieldNames) || !fieldNames.every((name) => typeof name === 'string'))) {
    throw new TypeError('option files.fieldNames must be an array of strings')
  }
  return {
    storage,
    directory: directory as string | undefined,
    fileSizeLimit: readSize(given, 'fileSizeLimit', DEFAULT_FILE_SIZE, 'files.'),
    fileLimit: readCount(given, 'fileLimit', DEFAULT_FILE_COUNT, 1, 'files.'),
    fieldNames: fieldNames === undefined ? null : new Set(fieldNames as string[])
  }
}

/**
 * A count option: a whole number at least `min`, or Infinity. Security (multer #1335): a string, NaN or boolean
 * throws here instead of silently meaning "no limit".
 */
function readCount (given: Record<string, unknown>, name: string, fallback: number, min = 1, prefix = ''): number {
  const value = given[name]
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(value >= min) || (value !== Infinity && !Number.isInteger(value))) {
    throw new TypeError('option ' + prefix + name + ' must be a whole number of at least ' + min)
  }
  return value
}

/** A size option: bytes, or a string for the `bytes` module; never NaN or negative. */
function readSize (given: Record<string, unknown>, name: string, fallback: number, prefix = ''): number {
  const value = given[name]
  if (value === undefined) return fallback
  const size = typeof value === 'number' || typeof value === 'string' ? bytes.parse(value) : null
  if (typeof size !== 'number' || !(size >= 0)) throw new TypeError('option ' + prefix + name + ' "' + String(value) + '" is invalid')
  return size
}

/** Whether busboy can decode field values with this charset: it decodes with TextDecoder (or natively, for utf-8 and latin1). */
function isDecodable (charset: string): boolean {
  try {
    new TextDecoder(charset)
    return true
  } catch {
    return false
  }
}

/** busboy's configuration for multipart()'s settings. */
export function createParserConfig (settings: MultipartSettings): ReadingConfig {
  return {
    // Values whose part declares no charset are decoded once the form's `_charset_` is known (fields.ts).
    undeclaredAsBytes: true,
    // Browsers send names and file names as raw UTF-8.
    defParamCharset: 'utf8',
    limits: {
      // busboy reports a limit when it is reached, not passed: one more byte or part means "over".
      fieldSize: settings.fieldSizeLimit + 1,
      fileSize: settings.files === null ? Infinity : settings.files.fileSizeLimit + 1,
      parts: settings.partLimit + 1
    }
  }
}
