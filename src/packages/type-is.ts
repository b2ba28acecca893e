// type-is, loaded when a middleware is created whose `type` option names an extension (`'json'`, `'png'`): only those need the MIME database.
/* eslint-disable @typescript-eslint/no-require-imports */
import type TypeIsModule from 'type-is'
import { onFirstUse } from '../dependencies'

export const loadTypeIs = /* @__PURE__ */ onFirstUse((): typeof TypeIsModule => require('type-is') as typeof TypeIsModule)

/** The media type of an extension name, as type-is's `normalize` gives it (the MIME database loads on the first call). */
export function typeOfExtension (name: string): string | false {
  return loadTypeIs().normalize(name)
}
