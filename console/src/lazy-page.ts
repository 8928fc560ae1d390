import { createElement, lazy, useState, type ComponentType } from 'react'

const loadPageStyles = () => import('./mantine-page-styles')

/**
 * A page in a chunk of its own, loaded on first render as React.lazy, or earlier with `preload`. Once loaded it renders
 * at once: React.lazy would still suspend on its first render, and React shows content that suspended no sooner than
 * 300 ms after its fallback appeared.
 */
export function lazyPage<P extends object>(load: () => Promise<{ default: ComponentType<P> }>) {
  let loaded: ComponentType<P> | undefined
  let loading: Promise<{ default: ComponentType<P> }> | undefined
  const preload = () =>
    // The pages' share of Mantine's CSS comes with the first page (its stylesheet inserted before the page's own).
    (loading ??= Promise.all([loadPageStyles(), load()]).then(
      ([, module]) => {
        loaded = module.default
        return module
      },
      (error: unknown) => {
        loading = undefined
        throw error
      },
    ))
  const Lazy = lazy(preload)
  function Page(props: P) {
    // Chosen once per mount: a different component type later would mount the page afresh, losing its state.
    const [Component] = useState<ComponentType<P>>(() => loaded ?? Lazy)
    return createElement(Component, props)
  }
  return Object.assign(Page, { preload })
}
