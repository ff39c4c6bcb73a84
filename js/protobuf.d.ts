// Types for darmok/protobuf: the functions of darmok/json (index.d.ts) with
// protobuf bytes in place of JSON text.
import type { EncodeOptions, DecodeOptions, Bytes, DecodeFunction } from './index';

export type {
  Class, FieldData, SerializableOptions, SerializableDecorator, EncodeOptions, DecodeOptions,
  SerializableFunction, Registry, Format, Encoded, CodecOptions, Codec, TranscodeOptions, DarmokErrorCode,
  Bytes, ResponseLike, URLLike, WasmModule, WasmSource,
  KeyTransform, RegistryOptions, ConfigureOptions, FieldSelection, ToPlainOptions, FromPlainOptions, PlainValue, DecodedCollection, Collection, DecodeFunction
} from './index';
export {
  serializable, createRegistry, createCodec, transcode, init, DarmokError, toPlain, fromPlain, configure,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
} from './index';

/** Encode a value to darmok protobuf bytes (a darmok.Document; a Buffer in Node). */
export function encodeEntity(value: unknown, options?: EncodeOptions & { format?: 'protobuf' }): Bytes;
/** With `{ bytes: true }`: bytes in either format (darmok JSON as its UTF-8). */
export function encodeEntity(value: unknown, options: EncodeOptions & { bytes: true }): Bytes;
/** With `{ format: 'json' }`: darmok JSON text. */
export function encodeEntity(value: unknown, options: EncodeOptions & { format: 'json' }): string;
/** A format known only at run time: protobuf bytes or JSON text. */
export function encodeEntity(value: unknown, options: EncodeOptions): Bytes | string;

/**
 * Decode darmok protobuf bytes. Class, when given, is registered first, and
 * the top-level value is a Class or null (else ERR_UNEXPECTED_CLASS), or
 * with `collection` that collection of them, as in darmok/json.
 */
export const decodeEntity: DecodeFunction<Uint8Array, DecodeOptions>;

declare const darmok: {
  serializable: typeof import('./index').serializable;
  encodeEntity: typeof encodeEntity;
  decodeEntity: typeof decodeEntity;
  toPlain: typeof import('./index').toPlain;
  fromPlain: typeof import('./index').fromPlain;
  configure: typeof import('./index').configure;
  createCodec: typeof import('./index').createCodec;
  createRegistry: typeof import('./index').createRegistry;
  transcode: typeof import('./index').transcode;
  init: typeof import('./index').init;
  DarmokError: typeof import('./index').DarmokError;
  MAX_DEPTH: typeof import('./index').MAX_DEPTH;
  MAX_BYTES: typeof import('./index').MAX_BYTES;
  MAX_LENGTH: typeof import('./index').MAX_LENGTH;
  MAX_REGEXP_LENGTH: typeof import('./index').MAX_REGEXP_LENGTH;
};
export default darmok;
