import { Tokenizer, TokenParser, TokenType, type ParsedTokenInfo } from '@streamparser/json';
import { TextDecoder } from 'node:util';
import type { ByteSize } from '../config.js';
import { escapesSurrogate, holdsLoneSurrogate, jsonNumber } from '../json.js';
import { ServerError, unreadableBody } from './server-error.js';

/**
 * A value of a JSON body: an element of its top-level array (`index`), or of the array an object body holds under
 * the key the reader was given (`{"packagingUnits": [...]}`), or the whole body when it is neither.
 */
export interface JsonElement {
  readonly index: number | undefined;
  readonly value: unknown;
}

/**
 * Numbers as parseJson gives them: exact (LosslessNumber) where a double would round. Strings keep U+FEFF: the
 * parser decodes each run of a string with a TextDecoder that drops it where a run begins, as if it were a byte
 * order mark, so its decoder is replaced by one that keeps it.
 */
class ExactNumberTokenizer extends Tokenizer {
  constructor() {
    super();
    const strings = (this as unknown as { bufferedString?: { decoder?: TextDecoder } }).bufferedString;
    if (!strings?.decoder) throw new Error('@streamparser/json no longer decodes strings as this expects');
    strings.decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  }

  protected override parseNumber(text: string): number {
    return jsonNumber(text) as number;
  }
}

/** What the key `within` of an object body held: nothing, an array (handed out), or a value of another type. */
export type MemberFound =
  | { readonly kind: 'absent' }
  | { readonly kind: 'array' }
  /** `like`: a value of the same JSON type, for the schema to name the type it found. */
  | { readonly kind: 'other'; readonly like: unknown };

const STAND_INS: Partial<Record<TokenType, unknown>> = {
  [TokenType.LEFT_BRACE]: {},
  [TokenType.STRING]: '',
  [TokenType.NUMBER]: 0,
  [TokenType.TRUE]: true,
  [TokenType.FALSE]: false,
  [TokenType.NULL]: null,
};

/** Above this many keys an object's keys go into a Set, so one object with very many keys stays linear. */
const KEYS_PER_LIST = 16;
/** The keys of an open object, in a list while they are few; null for an open array, whose strings are no keys. */
type Frame = { keys: string[] | Set<string>; expectsKey: boolean } | null;

/** An escape `\uD83D` may be cut across pieces: this much of the text before a piece is looked at with it. */
const ESCAPE_LENGTH = 6;

/**
 * Parses a JSON body piece by piece as it arrives and hands out each element of its top-level array once it is
 * complete, so only one element at a time is built (a body that is no array is one element). The checks of a
 * buffered JSON body hold, with the same answers: malformed JSON is a 400, and so are a string with a lone
 * surrogate and an object naming a key twice (in that precedence, over the whole body, so they are reported once
 * the body has ended); numbers a double cannot hold stay exact. An element larger than `elementLimit` is a 413:
 * it could otherwise take as much memory as the whole body.
 *
 * Given `within` (issue 39), an object body's array under that key is handed out element by element the same way
 * (`{"packagingUnits": [...]}`); the object's other members are read, each up to `elementLimit`, but not kept, and
 * `member` tells what the key held.
 */
export class JsonElements {
  private readonly tokenizer = new ExactNumberTokenizer();
  private parser: TokenParser | undefined;
  private readonly ready: JsonElement[] = [];
  private readonly frames: Frame[] = [];
  private isArray: boolean | undefined;
  private isObject = false;
  private nextIndex = 0;
  /** Where the element being read starts, in bytes of UTF-8; undefined between elements. */
  private elementStart: number | undefined;
  private lastOffset = 0;
  private bytes = 0;
  private tail = '';
  private escapesSurrogate = false;
  private loneSurrogate = false;
  private repeatedKey: string | undefined;
  /** An object body read for its member `within`: the key of the member being read. */
  private rootKey: string | undefined;
  /** Where the member of an object body being read starts (`within` only); undefined between members. */
  private memberStart: number | undefined;
  /** Whether the array under `within` is being read. */
  private inMember = false;
  private memberFound: MemberFound = { kind: 'absent' };

  constructor(
    private readonly elementLimit: ByteSize,
    private readonly within?: string,
  ) {
    this.tokenizer.onToken = (token) => this.onToken(token);
  }

  /** Whether the body is an array; undefined until its first token. */
  get array(): boolean | undefined {
    return this.isArray;
  }

  /** For an object body read `within` a key: what the key held (its elements are handed out when an array). */
  get member(): MemberFound | undefined {
    return this.streamsMember ? this.memberFound : undefined;
  }

  private get streamsMember(): boolean {
    return this.within !== undefined && this.isObject;
  }

  /**
   * Whether a refusal of the whole body is known already (a repeated key, a lone surrogate): its elements are then
   * handed out no more, since the body will be refused whatever they hold.
   */
  get refused(): boolean {
    return this.loneSurrogate || this.repeatedKey !== undefined;
  }

  /** Reads the next piece of text; answers the elements it completed. */
  write(piece: string): JsonElement[] {
    if (!this.escapesSurrogate && escapesSurrogate(this.tail + piece)) this.escapesSurrogate = true;
    this.tail = (this.tail + piece).slice(1 - ESCAPE_LENGTH);
    this.bytes += Buffer.byteLength(piece);
    this.parse(() => this.tokenizer.write(piece));
    if (this.elementStart !== undefined && this.bytes - this.elementStart > this.elementLimit.bytes) {
      throw this.elementTooLarge();
    }
    if (this.memberStart !== undefined && this.bytes - this.memberStart > this.elementLimit.bytes) {
      throw this.memberTooLarge();
    }
    return this.take();
  }

  /** Ends the body: answers the elements still to come, or throws what makes the whole body unreadable. */
  end(): JsonElement[] {
    this.parse(() => this.tokenizer.end());
    if (this.parser && !this.parser.isEnded) throw unreadableBody('malformed JSON (Unexpected end of JSON input)');
    if (this.loneSurrogate) throw unreadableBody('a string holds a lone UTF-16 surrogate, which is no character');
    if (this.repeatedKey !== undefined) {
      throw unreadableBody(`an object names the key ${JSON.stringify(this.repeatedKey)} more than once`);
    }
    return this.take();
  }

  private take(): JsonElement[] {
    return this.ready.splice(0, this.ready.length);
  }

  private parse(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (error instanceof ServerError) throw error;
      throw unreadableBody(`malformed JSON (${(error as Error).message})`);
    }
  }

  private elementTooLarge(): ServerError {
    const which = this.isArray
      ? `element [${this.nextIndex}]`
      : this.streamsMember
        ? `element ${this.within}[${this.nextIndex}]`
        : 'value';
    return new ServerError(
      413,
      'PayloadTooLargeException',
      `Request body ${which} exceeds the limit of one resource, ${this.elementLimit.text}`,
    );
  }

  private memberTooLarge(): ServerError {
    return new ServerError(
      413,
      'PayloadTooLargeException',
      `Request body member ${JSON.stringify(this.rootKey)} exceeds the limit of one resource, ${this.elementLimit.text}`,
    );
  }

  private onToken(info: ParsedTokenInfo): void {
    const { token, value, offset } = info;
    if (!this.parser) {
      this.isArray = token === TokenType.LEFT_BRACKET;
      this.isObject = token === TokenType.LEFT_BRACE;
      const path = this.isArray ? '$.*' : this.streamsMember ? `$.${this.within}.*` : '$';
      this.parser = new TokenParser({ paths: [path], keepStack: false });
      this.parser.onValue = ({ value: element }) => this.onElement(element);
    }
    const depth = this.frames.length;
    if (this.streamsMember && depth === 1) this.onMemberToken(token, value, offset);
    const elementDepth = this.isArray ? 1 : this.streamsMember ? (this.inMember ? 2 : -1) : 0;
    if (this.elementStart === undefined && depth === elementDepth && token !== TokenType.COMMA) {
      if (token !== TokenType.RIGHT_BRACKET) this.elementStart = offset;
    }
    if (this.inMember && depth === 2 && token === TokenType.RIGHT_BRACKET) this.inMember = false;
    this.lastOffset = offset;
    if (token === TokenType.LEFT_BRACE) {
      this.frames.push({ keys: [], expectsKey: true });
    } else if (token === TokenType.LEFT_BRACKET) {
      this.frames.push(null);
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      this.frames.pop();
    } else {
      const frame = this.frames[depth - 1];
      if (frame && token === TokenType.COMMA) frame.expectsKey = true;
      else if (frame?.expectsKey && token === TokenType.STRING) {
        frame.expectsKey = false;
        this.noteKey(frame, value as string);
      }
    }
    this.parser.write(info);
  }

  /**
   * A token directly inside an object body read `within` a key: notes which member is read, streams the array under
   * that key, and bounds every other member to `elementLimit`.
   */
  private onMemberToken(token: TokenType, value: unknown, offset: number): void {
    const frame = this.frames[0];
    if (token === TokenType.COMMA || token === TokenType.RIGHT_BRACE) {
      if (this.memberStart !== undefined && offset - this.memberStart > this.elementLimit.bytes) {
        throw this.memberTooLarge();
      }
      this.memberStart = undefined;
    } else if (token === TokenType.STRING && frame?.expectsKey) {
      this.rootKey = value as string;
    } else if (token !== TokenType.COLON) {
      if (this.rootKey !== this.within) {
        this.memberStart = offset;
      } else if (token === TokenType.LEFT_BRACKET) {
        this.inMember = true;
        this.memberFound = { kind: 'array' };
      } else {
        this.memberStart = offset;
        this.memberFound = { kind: 'other', like: STAND_INS[token] ?? null };
      }
    }
  }

  /** Keeps the first key that an object names twice: JSON.parse would silently keep the last of them (issue 15). */
  private noteKey(frame: NonNullable<Frame>, key: string): void {
    if (this.repeatedKey !== undefined) return;
    const { keys } = frame;
    if (Array.isArray(keys)) {
      if (keys.includes(key)) this.repeatedKey = key;
      else if (keys.length < KEYS_PER_LIST) keys.push(key);
      else frame.keys = new Set([...keys, key]);
    } else if (keys.has(key)) {
      this.repeatedKey = key;
    } else {
      keys.add(key);
    }
  }

  private onElement(value: unknown): void {
    const start = this.elementStart ?? 0;
    this.elementStart = undefined;
    if (this.lastOffset + 1 - start > this.elementLimit.bytes) throw this.elementTooLarge();
    const index = this.isArray || this.streamsMember ? this.nextIndex++ : undefined;
    if (this.escapesSurrogate && !this.loneSurrogate && holdsLoneSurrogate(value)) this.loneSurrogate = true;
    if (!this.refused) this.ready.push({ index, value });
  }
}
