model = dict(type="ToyZooClassifier", in_features=4, num_classes=3)
