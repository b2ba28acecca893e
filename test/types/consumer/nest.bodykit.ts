// Consumer fixture (bodykit only): bodykit/nest's interceptors where a Nest app puts @nestjs/platform-express's, typed
// with @nestjs/common's own types; the options (bodykit/multer's, with Nest's `dest` function), fields and the file type.
import { UseInterceptors, type NestInterceptor, type Type } from '@nestjs/common'
import { AnyFilesInterceptor, FileFieldsInterceptor, FileInterceptor, FilesInterceptor, NoFilesInterceptor, type MulterField, type MulterOptions } from 'bodykit/nest'

const options: MulterOptions = {
  dest: 'uploads/',
  limits: { fileSize: 5 * 1024 * 1024, files: 3, parts: 20, fieldNestingDepth: 4 },
  fileFilter: (_req, file, callback) => callback(null, file.mimetype.startsWith('image/'))
}
const fields: MulterField[] = [{ name: 'avatar', maxCount: 1 }, { name: 'gallery' }]
const interceptors: Array<Type<NestInterceptor>> = [
  FileInterceptor('avatar', options),
  FilesInterceptor('photos', 8, { limits: (req) => ({ fileSize: req.headers['x-plan'] === 'pro' ? 50e6 : 5e6 }) }),
  FileFieldsInterceptor(fields),
  AnyFilesInterceptor({ dest: (_req, _file, callback) => callback(null, 'uploads/') }),
  NoFilesInterceptor()
]
// What `@UseInterceptors(...)` is given in a controller (no decorator syntax here: the fixtures compile without experimentalDecorators).
export const decorate: MethodDecorator & ClassDecorator = UseInterceptors(...interceptors)

/** What a handler reads of `@UploadedFile() file: Express.Multer.File`: the global bodykit/multer declares. */
export function describeFile (file: Express.Multer.File): string {
  return `${file.fieldname} ${file.originalname} ${file.mimetype} ${file.size} ${file.buffer?.length ?? file.path}`
}

// @ts-expect-error maxCount is a number
FilesInterceptor('photos', '8')
// @ts-expect-error a limit is a number
FileInterceptor('avatar', { limits: { fileSize: '5mb' } })
