package agent

// ImageView is the model looking at an image file with view_image. Its ID
// is the model's call id; Path is the file, absolute.
type ImageView struct {
	ID   string
	Path string
}

func (i *ImageView) ItemID() string { return i.ID }
func (*ImageView) isItem()          {}
