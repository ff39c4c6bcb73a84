// Types for darmok and darmok/json (the same functions).

/** A class darmok can register: anything constructible with a prototype. */
export type Class<T = any> = abstract new (...args: any[]) => T;

/** The options form of serializable(). */
export interface SerializableOptions {
  /** The class key written into the bytes. Default: the class name at registration. */
  key?: string;
  /** Classes used inside this one, registered with it. */
  nested?: ReadonlyArray<Class>;
}

/** What serializable() returns in its decorator-factory forms. */
export interface SerializableDecorator {
  /** Legacy / TypeScript `experimentalDecorators` class decorator, or a plain call. */
  <C extends Class>(value: C): C;
  /** TC39 class decorator. */
  <C extends Class>(value: C, context: ClassDecoratorContext<C>): void;
}

/**
 * Register a class (tanagra 0.x form). Returns a constructor Proxy whose
 * instances carry an own, non-enumerable `_serializationKey`.
 */
export function serializable<C extends Class>(Class: C, nestedTypes?: ReadonlyArray<Class>, key?: string): C;
/** Register a class with options. Returns a constructor Proxy, as above. */
export function serializable<C extends Class>(Class: C, options: SerializableOptions): C;
/** Decorator factory (tanagra 1.x): `@serializable()`, `@serializable('key')`, `@serializable({ key, nested })`. */
export function serializable(keyOrOptions?: string | SerializableOptions): SerializableDecorator;

export interface EncodeOptions {
  /**
   * Throw instead of skipping: ERR_UNSUPPORTED_TYPE for functions, symbols,
   * WeakMap, Promise, boxed primitives...; ERR_UNREGISTERED_CLASS for
   * instances of unregistered classes. Default false.
   */
  strict?: boolean;
  /** Deepest nesting allowed; deeper throws ERR_DEPTH. Default 1000. */
  maxDepth?: number;
}

export interface DecodeOptions {
  /** An unregistered class key: 'throw' ERR_UNKNOWN_CLASS (default) or decode as a 'plain' object. */
  unknownClass?: 'throw' | 'plain';
  /** Deepest nesting allowed; deeper throws ERR_DEPTH. Default 1000. */
  maxDepth?: number;
  /** Largest input in UTF-8 bytes; larger throws ERR_TOO_LARGE. Default 64 MiB. */
  maxBytes?: number;
  /**
   * Largest string (bytes), array (elements, holes included), Map or Set
   * (entries) or binary value (bytes); larger throws ERR_TOO_LARGE.
   * Default 16 Mi (16777216).
   */
  maxLength?: number;
}

/** Encode a value to darmok JSON text. */
export function encodeEntity(value: unknown, options?: EncodeOptions): string;

/** Decode darmok JSON text (a string, or UTF-8 bytes). Class, when given, is registered first. */
export function decodeEntity<T = any>(blob: string | Uint8Array, Class?: Class<T> | null, options?: DecodeOptions): T;
export function decodeEntity<T = any>(blob: string | Uint8Array, options: DecodeOptions): T;

/**
 * Ready the WebAssembly core. In Node it is ready at load and this resolves
 * at once; elsewhere pass the .wasm bytes, a WebAssembly.Module or a Response.
 */
export function init(source?: BufferSource | WebAssembly.Module | Response | PromiseLike<Response>): Promise<void>;

export type DarmokErrorCode =
  | 'ERR_SYNTAX'
  | 'ERR_FORMAT'
  | 'ERR_UNSUPPORTED_TYPE'
  | 'ERR_UNREGISTERED_CLASS'
  | 'ERR_UNKNOWN_CLASS'
  | 'ERR_DEPTH'
  | 'ERR_TOO_LARGE'
  | 'ERR_MEMORY'
  | 'ERR_INTERNAL'
  | 'ERR_INVALID_OPTION';

/** Every failure of darmok. */
export class DarmokError extends Error {
  readonly code: DarmokErrorCode;
  /** Byte offset into the decoded input, for errors found while parsing. */
  readonly offset?: number;
  /** Where in the value, like `$.bars[1].baz`, when known. */
  readonly path?: string;
}

declare const darmok: {
  serializable: typeof serializable;
  encodeEntity: typeof encodeEntity;
  decodeEntity: typeof decodeEntity;
  init: typeof init;
  DarmokError: typeof DarmokError;
};
export default darmok;
