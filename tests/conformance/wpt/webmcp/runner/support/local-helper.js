window.localHelperLoaded = true;
