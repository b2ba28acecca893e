// secure-json-parse, loaded when a json parser with a poisoning option is created: the guard's scan, run on texts that can hold `__proto__` or `constructor`.
/* eslint-disable @typescript-eslint/no-require-imports */
import type SecureJsonParseModule from 'secure-json-parse'
import { onFirstUse } from '../dependencies'

export const loadSecureJsonParse = /* @__PURE__ */ onFirstUse((): typeof SecureJsonParseModule => require('secure-json-parse') as typeof SecureJsonParseModule)
