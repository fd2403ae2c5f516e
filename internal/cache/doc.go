// Package cache is the home of what keeps the controllers' caches small:
// informers that list a page at a time (pagedlist), objects held as
// compact JSON or as metadata only (compactobj), repeated strings
// and bytes held once (intern), and the cache of resource templates of
// every kind (templatecache).
package cache
