// Vite bundles the stylesheet the page imports.
declare module '*.css';
