package clusterclient

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// mappingCache remembers the REST mappings its mapper found for one kind
// and version, until Reset. A discovery mapper asks every API group's
// mapper in turn and builds an error for each that does not know the kind,
// on every call: several kilobytes per call, made for every Work on every
// status change of its copies. Mappings are shared: callers do not modify
// them. What is not found is asked again each time, so that a kind the
// member starts serving is found after the next Reset.
type mappingCache struct {
	meta.ResettableRESTMapper
	mu    sync.RWMutex
	known map[schema.GroupVersionKind]*meta.RESTMapping
	// resets counts Resets: a mapping found across one is not kept.
	resets uint64
}

func newMappingCache(m meta.ResettableRESTMapper) *mappingCache {
	return &mappingCache{ResettableRESTMapper: m, known: map[schema.GroupVersionKind]*meta.RESTMapping{}}
}

// RESTMapping returns the mapping of gk in the one version given from the
// cache, asking the mapper when it has none; other calls go to the mapper.
func (c *mappingCache) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return c.ResettableRESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	c.mu.RLock()
	m, ok := c.known[gvk]
	resets := c.resets
	c.mu.RUnlock()
	if ok {
		return m, nil
	}
	m, err := c.ResettableRESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.resets == resets {
		c.known[gvk] = m
	}
	c.mu.Unlock()
	return m, nil
}

// Reset forgets the cached mappings and resets the mapper (which reads
// discovery again on its next use).
func (c *mappingCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ResettableRESTMapper.Reset()
	c.known = map[schema.GroupVersionKind]*meta.RESTMapping{}
	c.resets++
}
