import { useEffect, useState } from 'preact/hooks';
import { get } from './api';
import type { Page } from './types';

/** A list the page shows, and the changes made to it: each change reloads it, an error shows in place. */
export function useList<T>(url: string) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    get<Page<T>>(url).then((page) => {
      setItems(page.data);
      setError(null);
    }, setError);
  useEffect(() => void load(), [url]);
  const change = async (work: () => Promise<unknown>): Promise<boolean> => {
    try {
      await work();
      await load();
      return true;
    } catch (e) {
      setError(e);
      return false;
    }
  };
  return { items, error, load, change };
}
