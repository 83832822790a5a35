// Stylesheets are imported for their side effect; Vite bundles them into the page's CSS file.
declare module '*.css';
