import { authorization } from './credentials.js';

/** Reading the service: HAL resources and links, lists page by page. The page knows one address, /index. */
export interface Link {
  href: string;
}
export type Links = Record<string, Link | undefined>;
export interface Resource {
  _links: Links;
  [field: string]: unknown;
}

export class RequestFailed extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function read<T>(href: string, accept = 'application/hal+json'): Promise<T> {
  const response = await fetch(href, { headers: { ...authorization(), Accept: accept } });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { message?: string };
    throw new RequestFailed(response.status, body.message ?? `${response.status} ${response.statusText}`);
  }
  return (await response.json()) as T;
}

/** A link by its relation; the page has nothing to show without it. */
export function link(resource: Resource, rel: string): string {
  const found = resource._links[rel];
  if (!found) throw new Error(`the service offers no '${rel}' link`);
  return found.href;
}

/** A resource reached from /index by following one relation per step. */
export async function follow(...rels: string[]): Promise<Resource> {
  let resource = await read<Resource>('/index');
  for (const rel of rels) resource = await read<Resource>(link(resource, rel));
  return resource;
}

/**
 * RFC 6570 level 1 for the service's templates: each {name} filled in, and a query pair whose variable has no
 * value left out (`/v1/events?after={cursor}&limit={limit}` without values is `/v1/events`).
 */
export function expand(template: string, values: Record<string, string>): string {
  const fill = (text: string): string =>
    text.replace(/\{(\w+)\}/g, (_whole, name: string) => encodeURIComponent(values[name] ?? ''));
  const [path = '', query] = template.split('?');
  const pairs = (query ?? '').split('&').filter((pair) => {
    const variable = /\{(\w+)\}/.exec(pair);
    return pair !== '' && (!variable || values[variable[1]!] !== undefined);
  });
  return pairs.length > 0 ? `${fill(path)}?${pairs.map(fill).join('&')}` : fill(path);
}

/** The address with one query parameter set, whatever the address held before. */
export function withParameter(href: string, name: string, value: string): string {
  const url = new URL(href, window.location.href);
  url.searchParams.set(name, value);
  return url.href;
}

export interface ListPage<Item> {
  readonly items: Item[];
  readonly next?: string;
}

/** A page of a HAL list: its items under `_embedded[rel]` and the next page's address, when more follow. */
export async function readPage<Item>(href: string, rel: string): Promise<ListPage<Item>> {
  const body = await read<{ _embedded?: Record<string, Item[]>; _links: Links }>(href);
  return { items: body._embedded?.[rel] ?? [], next: body._links.next?.href };
}
