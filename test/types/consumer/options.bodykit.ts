// Consumer fixture (bodykit only): every option of every parser accepts an explicit `undefined`, as checked
// by the exactOptionalPropertyTypes configuration; an option added later is covered without being listed.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')

/** An object with every option of `T`, each set to `undefined`. */
type AllUndefined<T> = { [K in keyof Required<T>]: undefined }

const json: bodykit.OptionsJson = {} as AllUndefined<bodykit.OptionsJson>
const raw: bodykit.Options = {} as AllUndefined<bodykit.Options>
const text: bodykit.OptionsText = {} as AllUndefined<bodykit.OptionsText>
const urlencoded: bodykit.OptionsUrlencoded = {} as AllUndefined<bodykit.OptionsUrlencoded>
const legacyUrlencoded: legacy.OptionsUrlencoded = {} as AllUndefined<legacy.OptionsUrlencoded>
const generic: Parameters<legacy.BodyParser>[0] = {} as AllUndefined<NonNullable<Parameters<legacy.BodyParser>[0]>>

export const middlewares = [bodykit.json(json), bodykit.raw(raw), bodykit.text(text), bodykit.urlencoded(urlencoded), legacy.urlencoded(legacyUrlencoded), legacy(generic)]
